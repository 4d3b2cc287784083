/** The A2A agent executor of one served Request (A2A-4 to A2A-9): each task a run tree, its trace told as status updates, its approvals asked of the client. */
import { type Message, type Part, type Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import type { ApprovalPrompt } from '../approvals/approval-policy.js';
import type { ConfirmDecision, ConfirmRequest, RunResult } from '../protocol/contracts.js';
import { InputError, ProtocolError, UsageError } from '../protocol/errors.js';
import { progressMessage } from '../protocol/trace/progress-message.js';
import { Tracer } from '../protocol/trace/trace.js';
import type { CatalogEntry } from '../server/validate-document.js';
import { agentMessage, approvalAnswer, approvalQuestion, dataPart, inputOf, textPart } from './task-messages.js';

/** What one task's run is given: its cancellation, the tracer its status updates listen to, and how its approvals are asked. */
export interface TaskRun {
  signal: AbortSignal;
  tracer: Tracer;
  /** Asks the task's client about one call (A2A-8); the runner decides whether approvals are asked at all. */
  prompt: ApprovalPrompt;
}

/** Runs the Request at `reference` (a file below the served folder) with `input`, as `delegate-run` would (A2A-4). */
export type RequestRunner = (reference: string, input: unknown, run: TaskRun) => Promise<RunResult>;

/** The Request an executor runs: where its file is, and its catalog entry (whose input schema reads text input, A2A-4). */
export interface ServedRequest {
  reference: string;
  entry: CatalogEntry;
}

/** The key of the status metadata naming the trace event a `working` update tells of (A2A-7). */
export const EVENT_METADATA = 'delegate-run/event';

/** A question the client has not answered yet. */
interface PendingApproval {
  request: ConfirmRequest;
  answer: (decision: ConfirmDecision) => void;
}

/** One task whose run is live: where its events go, what waits for the client, and the promise of its next stop. */
class LiveTask {
  readonly controller = new AbortController();
  pending: PendingApproval | undefined;
  private stopped!: () => void;
  /** Settles when the run next stops: it asks for input, or it ended. */
  nextStop!: Promise<void>;

  constructor(
    readonly taskId: string,
    readonly contextId: string,
    public bus: ExecutionEventBus,
  ) {
    this.expectStop();
  }

  /** A new promise of the next stop, after the client answered. */
  expectStop(): void {
    this.nextStop = new Promise((resolve) => {
      this.stopped = resolve;
    });
  }

  /** Publishes a status update of the task; an input-required or final state is a stop. */
  status(state: TaskState, parts?: Part[], metadata?: Record<string, unknown>): void {
    const message = parts === undefined ? undefined : agentMessage(this, parts);
    this.bus.publish(
      AgentEvent.statusUpdate({ taskId: this.taskId, contextId: this.contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata }),
    );
    if (state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED) this.stopped();
  }
}

/** The task event that opens a task's first turn: submitted, with the client's message as its history. */
function submittedTask(context: RequestContext): Task {
  return {
    id: context.taskId,
    contextId: context.contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [context.userMessage],
    metadata: undefined,
  };
}

/** The parts of a failed task (A2A-6): the code and message as text, and the error as data (its pointers with it). */
function failureParts(error: ProtocolError): Part[] {
  return [textPart(`${error.code}: ${error.message}`), dataPart({ error: error.toJSON() })];
}

/**
 * The executor of one served Request. A new task runs the Request with the input of the client's
 * message (A2A-4); the turn lasts until the run stops: it ends (`completed` with the output as an
 * artifact's JSON data part, `failed` with the typed error, `canceled`, A2A-6) or an approval waits
 * for the client (`input-required`, A2A-8). A later message in a task whose approval waits is the
 * answer, and its turn lasts until the run's next stop. While a run goes on, its trace events are
 * told as `working` status updates (A2A-7). Cancelling a task aborts its run tree (A2A-9).
 */
export class RequestExecutor implements AgentExecutor {
  private readonly live = new Map<string, LiveTask>();

  constructor(
    private readonly served: () => ServedRequest,
    private readonly run: RequestRunner,
  ) {}

  /** Cancels every live task's run, as stopping the server does. */
  cancelAll(): void {
    for (const task of this.live.values()) task.controller.abort();
  }

  /** Starts a task's run, or takes a later message of a live task as the answer it waits for; resolves at the run's next stop. */
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const task = this.live.get(context.taskId);
    if (task !== undefined) return this.answer(task, context, bus);
    if (context.task !== undefined) {
      // A known task whose run has just ended, its final state not stored yet: nothing can take the message.
      bus.publish(AgentEvent.task(context.task));
      const stray = new LiveTask(context.taskId, context.contextId, bus);
      stray.status(TaskState.TASK_STATE_FAILED, [textPart('usage_error: No run of this task waits for an answer on this server.')]);
      return;
    }
    bus.publish(AgentEvent.task(submittedTask(context)));
    const started = new LiveTask(context.taskId, context.contextId, bus);
    this.live.set(context.taskId, started);
    void this.start(started, context.userMessage);
    await started.nextStop;
  };

  /** Aborts a live task's run tree; its end publishes `canceled` (A2A-9). */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const task = this.live.get(taskId);
    if (task === undefined) return;
    // The run ends as cancelled and says so on this bus (A2A-9).
    task.bus = bus;
    task.controller.abort();
  };

  /** A later message in a live task: the answer to its approval (A2A-8); its turn lasts until the run's next stop. */
  private async answer(task: LiveTask, context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    task.bus = bus;
    bus.publish(AgentEvent.task(context.task as Task));
    const pending = task.pending;
    if (pending === undefined) {
      // Nothing asked: the message is not taken, and its turn follows the run to its next stop, as the first one does.
      task.status(TaskState.TASK_STATE_WORKING, [textPart('The run is not waiting for an answer: this message is not taken.')]);
      await task.nextStop;
      return;
    }
    const decision = approvalAnswer(context.userMessage, pending.request);
    if (typeof decision === 'string') {
      // Not an answer: the same question again, saying why (A2A-8).
      task.status(TaskState.TASK_STATE_INPUT_REQUIRED, approvalQuestion(pending.request, decision));
      return;
    }
    task.pending = undefined;
    task.expectStop();
    task.status(TaskState.TASK_STATE_WORKING);
    pending.answer(decision);
    await task.nextStop;
  }

  /** Runs the task's Request to its end and publishes how it ended (A2A-4, A2A-6). */
  private async start(task: LiveTask, message: Message): Promise<void> {
    const served = this.served();
    const tracer = new Tracer();
    const names = new Map<string, string>();
    tracer.subscribe((event) => {
      if (event.event === 'run.started') names.set(event.run, String(event.name));
      // While a question waits, the task stays input-required: no update says otherwise (A2A-8).
      if (task.pending !== undefined) return;
      const said = progressMessage(event, names);
      if (said !== undefined) task.status(TaskState.TASK_STATE_WORKING, [textPart(said)], { [EVENT_METADATA]: event.event });
    });
    const prompt: ApprovalPrompt = (request) =>
      new Promise<ConfirmDecision>((resolve) => {
        const stop = () => resolve({ decision: 'rejected', reason: 'The task was cancelled.' });
        if (request.signal.aborted) return stop();
        request.signal.addEventListener('abort', stop, { once: true });
        task.pending = {
          request,
          answer: (decision) => {
            request.signal.removeEventListener('abort', stop);
            resolve(decision);
          },
        };
        task.status(TaskState.TASK_STATE_INPUT_REQUIRED, approvalQuestion(request));
      });
    task.status(TaskState.TASK_STATE_WORKING);
    let result: RunResult;
    try {
      result = await this.run(served.reference, inputOf(message, served.entry.input), { signal: task.controller.signal, tracer, prompt });
    } catch (error) {
      // Input its schema refuses fails the task before anything ran, with the pointers (A2A-5); so does a Request that cannot be loaded.
      // The document is named by its path on the server, never by its place on the server's disk (SERVE-3).
      const failed =
        error instanceof InputError
          ? new InputError({ name: served.entry.name, location: served.entry.path }, error.issues)
          : error instanceof ProtocolError
            ? error
            : new UsageError(error instanceof Error ? error.message : String(error));
      this.finish(task, TaskState.TASK_STATE_FAILED, failureParts(failed));
      return;
    }
    if (result.ok) {
      task.bus.publish(
        AgentEvent.artifactUpdate({
          taskId: task.taskId,
          contextId: task.contextId,
          artifact: {
            artifactId: 'output',
            name: 'output',
            description: 'The output of the run.',
            parts: [dataPart(result.output)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      this.finish(task, TaskState.TASK_STATE_COMPLETED, undefined, { 'delegate-run/run': result.run, 'delegate-run/usage': result.usageTotal });
      return;
    }
    const state = result.error.code === 'cancelled_by_user' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
    this.finish(task, state, failureParts(result.error), { 'delegate-run/run': result.run });
  }

  /** Publishes the task's final state and forgets it. */
  private finish(task: LiveTask, state: TaskState, parts: Part[] | undefined, metadata?: Record<string, unknown>): void {
    this.live.delete(task.taskId);
    task.pending = undefined;
    task.status(state, parts, metadata);
  }
}
