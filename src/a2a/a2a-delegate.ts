/**
 * Delegation to an A2A agent (DEL-31 to DEL-37) through the official A2A SDK's client: the call's
 * input and scoped context go as data parts, the final artifact comes back as the call's result.
 * Loaded with a dynamic `import()` only when a `_delegate` names an A2A agent.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message as A2aMessage, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import type { ActivityEnvironment } from '../protocol/contracts.js';
import { ActivityError, DelegateError, ProtocolError, cancelled } from '../protocol/errors.js';
import { formatIssues, validateAgainst } from '../protocol/schemas.js';
import { metaValue } from '../protocol/tools/tools.js';
import type { Call, Message, ToolSchema } from '../protocol/types.js';
import { isJsonObject } from '../protocol/types.js';
import { delegateInput } from '../activities/delegate.js';
import type { UsageSummary } from '../protocol/usage.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { type AgentCardFacts, readAgentCard } from './agent-card.js';

/** How long a `CancelTask` sent when our run is cancelled may take before we stop waiting for it (DEL-36). */
export const CANCEL_TIMEOUT_MS = 5_000;
/** The largest answer read from an agent besides a stream, in bytes: as much as the SDK lets one stream event carry (DEL-35). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** The pause between two reads of a task that is still working, when the agent does not stream (DEL-35). */
export const POLL_INTERVAL_MS = 200;

/** What an A2A delegation needs besides its call: the URL resolver whose host rules it follows (DEL-32). */
export interface A2aDelegateOptions {
  urls: UrlResolver;
}

/** The states after which a task changes no more (A2A's terminal states). */
const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** The states a delegation stops following a task at: the terminal ones, and those that wait for someone (interrupted). */
const FINAL_STATES: ReadonlySet<TaskState> = new Set([...TERMINAL_STATES, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

/** What the delegation has seen of the agent's answer so far. */
interface Progress {
  taskId?: string;
  state?: TaskState;
  statusMessage?: A2aMessage;
  /** Artifacts by id, in the order they first came; appended chunks joined. */
  artifacts: Map<string, Artifact>;
  /** The size of each artifact's parts as JSON, in bytes, so joined chunks stay under {@link MAX_ANSWER_BYTES} (DEL-35). */
  artifactBytes: Map<string, number>;
  /** The agent answered with a message instead of a task. */
  message?: A2aMessage;
  /** The latest `usage` the agent reported in a task's or status update's metadata (DEL-37). */
  usage?: Record<string, unknown>;
}

/**
 * Runs a delegated call on an A2A agent (DEL-34 to DEL-37) and returns its result. Traces
 * `delegate.started` once the card is read and `delegate.completed` (usage marked `remote`) or
 * `delegate.failed`; the agent's failure is a `worker_error` the model sees, our cancellation a
 * `CancelTask` of its task.
 */
export async function runA2aDelegation(
  call: Call,
  tool: ToolSchema,
  context: Message[],
  environment: ActivityEnvironment,
  options: A2aDelegateOptions,
): Promise<unknown> {
  const reference = metaValue(call, tool, '_delegate') as string;
  // The agent is a level below the caller, like any delegate (DEL-14, DEL-19).
  environment.checkChild(`Delegating "${call._tool}" to ${reference}`);
  const facts = await readAgentCard(reference, options.urls, {
    base: environment.run.location,
    toolName: call._tool,
    tool,
    signal: environment.signal,
    trusted: environment.run.trusted,
  });
  const refusal: { error?: DelegateError } = {};
  const client = await createClient(facts, options.urls, refusal);
  // Named by its place in the tree, as a child run is (JOURNAL-6), so a tree run again names it alike.
  const child = `a2a_${createHash('sha256')
    .update(`${environment.run.id}\u0000${environment.callId}\u0000${environment.instance ?? ''}`)
    .digest('hex')
    .slice(0, 12)}`;
  const scopes = metaValue(call, tool, '_scopes');
  const model = `a2a:${facts.location.base}`;
  environment.trace.emit('delegate.started', {
    call: environment.callId,
    child,
    delegate: facts.location.base,
    name: facts.name,
    reference,
    registry: null,
    resolution: metaValue(call, tool, '_resolve') === 'upfront' ? 'upfront' : 'runtime',
    scopes: Array.isArray(scopes) ? scopes : [],
    model,
    tier: null,
  });
  const started = Date.now();
  const progress: Progress = { artifacts: new Map(), artifactBytes: new Map() };
  let reported: UsageSummary | undefined;
  const fail = (error: ProtocolError): never => {
    environment.trace.emit('delegate.failed', {
      call: environment.callId,
      child,
      code: error.code,
      message: error.message,
      error: error.toJSON(),
      ...(reported ? { usage: Object.assign({}, reported, { model, remote: true as const }) } : {}),
    });
    throw error;
  };
  let failure: ProtocolError | undefined;
  // No child run bounds the agent's work: the activity timeout does, when there is one (TOOL-24, DEL-35).
  const limit = environment.activityTimeoutMs;
  const deadline = limit === undefined ? undefined : AbortSignal.timeout(limit);
  const signal = deadline === undefined ? environment.signal : AbortSignal.any([environment.signal, deadline]);
  try {
    await follow(client, facts, outgoingMessage(call, context), progress, { signal, timeoutMs: options.urls.totalTimeoutMs });
  } catch (error) {
    // A task left behind, by our cancellation or a failure to follow it, is cancelled (DEL-36).
    await cancelTask(client, progress.taskId);
    failure = environment.signal.aborted
      ? cancelled(error)
      : deadline?.aborted
        ? pastActivityTimeout(facts, progress, call._tool, limit as number)
        : (refusal.error ?? (error instanceof DelegateError ? error : agentUnreachable(facts, error)));
  }
  const usage = remoteUsage(progress.usage, Date.now() - started);
  // Added whether the task completed or failed, as a child's total is (DEL-17).
  if (usage) environment.addRemoteUsage(usage);
  reported = usage;
  if (failure) return fail(failure);
  const outcome = outcomeOf(facts, progress, call._tool);
  if (outcome instanceof ProtocolError) {
    // A task interrupted, or left open by a stream that ended early, would wait for an answer that never comes (DEL-36).
    if (progress.state === undefined || !TERMINAL_STATES.has(progress.state)) await cancelTask(client, progress.taskId);
    return fail(outcome);
  }
  environment.trace.emit('delegate.completed', {
    call: environment.callId,
    child,
    usage: Object.assign({}, usage ?? emptyUsage(Date.now() - started), { model, remote: true as const }),
  });
  return outcome.value;
}

/**
 * The message sent (DEL-34): a data part holding the call's parameters without meta-properties
 * (the input object itself), then, when the call's scopes let any parent message through, a data
 * part `{context: [...]}` marked `metadata.kind: "context"`.
 */
function outgoingMessage(call: Call, context: readonly Message[]): A2aMessage {
  const parts: Part[] = [dataPart(delegateInput(call), undefined)];
  if (context.length > 0) parts.push(dataPart({ context }, { kind: 'context' }));
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function dataPart(value: unknown, metadata: Record<string, unknown> | undefined): Part {
  return { content: { $case: 'data', value }, metadata, filename: '', mediaType: 'application/json' };
}

/**
 * A client for the agent whose every request follows the host rules of URL delegates (DEL-32): an
 * allowed host, no credentials in the URL, no redirect followed, and never plain `http:` for an
 * agent whose card came over `https:`. A request refused is remembered in `refusal`, since the SDK
 * wraps what its fetch throws.
 */
async function createClient(facts: AgentCardFacts, urls: UrlResolver, refusal: { error?: DelegateError }): Promise<Client> {
  const cardUrl = new URL(facts.location.card);
  const guarded: typeof fetch = async (input, init) => {
    const target = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const refuse = (why: string): never => {
      refusal.error = new DelegateError('delegate_forbidden', `The A2A agent "${facts.reference}" is forbidden: ${why}.`, {
        reference: facts.reference,
        url: target.href,
      });
      throw refusal.error;
    };
    if (target.protocol !== 'http:' && target.protocol !== 'https:') refuse(`its card points to ${target.href}, which is not an http(s) URL`);
    if (cardUrl.protocol === 'https:' && target.protocol !== 'https:') refuse(`its card came over https but points to ${target.href}`);
    if (target.username || target.password) refuse('URLs carrying credentials are refused (they would end up in traces)');
    if (!urls.allowHosts.matches(target) && !urls.trustHosts.matches(target)) {
      refuse(`its card points to host ${target.host}, which is not on the allow-list (${urls.allowHosts.describe()}); allow it with --allow-host`);
    }
    const response = await fetch(input, { ...init, redirect: 'manual' });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      refuse(
        `${target.href} answered ${response.status}${response.headers.get('location') ? ` redirecting to ${response.headers.get('location')}` : ''}; redirects are not followed`,
      );
    }
    // A stream's events are capped one by one by the SDK (4 MiB each); any other answer as a whole, here.
    if (response.body === null || response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    return new Response(
      capped(response.body, MAX_ANSWER_BYTES, () => refuse(`${target.href} answered more than ${MAX_ANSWER_BYTES} bytes; the download was stopped`)),
      {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      },
    );
  };
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: guarded, legacyCompat }), new RestTransportFactory({ fetchImpl: guarded, legacyCompat })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: guarded, legacyCompat }),
      clientConfig: { polling: true },
    }),
  );
  try {
    return await factory.createFromAgentCard(facts.card as never);
  } catch (error) {
    throw new DelegateError('delegate_not_found', `The A2A agent "${facts.reference}" cannot be called: ${(error as Error).message}`, {
      reference: facts.reference,
      url: facts.location.card,
    });
  }
}

/**
 * Sends the message and follows the task to a final state (DEL-35): through the stream when the
 * card says the agent streams, else by reading the task again until it is final.
 */
async function follow(
  client: Client,
  facts: AgentCardFacts,
  message: A2aMessage,
  progress: Progress,
  bounds: { signal: AbortSignal; timeoutMs: number },
): Promise<void> {
  const { signal } = bounds;
  const request = { tenant: '', message, configuration: undefined, metadata: undefined };
  if (facts.streaming) {
    for await (const event of client.sendMessageStream(request, { signal })) {
      take(progress, event, facts);
      if (progress.message || (progress.state !== undefined && FINAL_STATES.has(progress.state))) return;
    }
    return;
  }
  const answer = await bounded('SendMessage', bounds, (options) => client.sendMessage(request, options));
  if ('messageId' in answer) {
    progress.message = answer;
    return;
  }
  takeTask(progress, answer);
  while (progress.state === undefined || !FINAL_STATES.has(progress.state)) {
    await pause(POLL_INTERVAL_MS, signal);
    takeTask(progress, await bounded('GetTask', bounds, (options) => client.getTask({ tenant: '', id: answer.id }, options)));
  }
}

/**
 * One request to the agent that must be answered within `timeoutMs` (DEL-35): one that is not
 * fails saying so; our own cancellation stays a cancellation.
 */
async function bounded<T>(
  method: string,
  bounds: { signal: AbortSignal; timeoutMs: number },
  send: (options: { signal: AbortSignal }) => Promise<T>,
): Promise<T> {
  const deadline = AbortSignal.timeout(bounds.timeoutMs);
  try {
    return await send({ signal: AbortSignal.any([bounds.signal, deadline]) });
  } catch (error) {
    if (deadline.aborted && !bounds.signal.aborted) throw new Error(`it did not answer ${method} within ${bounds.timeoutMs} ms`, { cause: error });
    throw error;
  }
}

function take(progress: Progress, event: StreamResponse, facts: AgentCardFacts): void {
  const payload = event.payload;
  if (!payload) return;
  switch (payload.$case) {
    case 'task':
      takeTask(progress, payload.value);
      return;
    case 'message':
      progress.message = payload.value;
      return;
    case 'statusUpdate': {
      progress.taskId ??= payload.value.taskId;
      if (payload.value.status) takeStatus(progress, payload.value.status);
      takeUsage(progress, payload.value.metadata);
      return;
    }
    case 'artifactUpdate': {
      progress.taskId ??= payload.value.taskId;
      const artifact = payload.value.artifact;
      if (!artifact) return;
      const earlier = progress.artifacts.get(artifact.artifactId);
      const appended = payload.value.append && earlier !== undefined;
      // The SDK caps each event; the chunks joined are capped here, as they come, not once the stream ends (DEL-35).
      const size = Buffer.byteLength(JSON.stringify(artifact.parts)) + (appended ? (progress.artifactBytes.get(artifact.artifactId) ?? 0) : 0);
      progress.artifactBytes.set(artifact.artifactId, size);
      let total = 0;
      for (const bytes of progress.artifactBytes.values()) total += bytes;
      if (total > MAX_ANSWER_BYTES) {
        throw new DelegateError(
          'delegate_forbidden',
          `The A2A agent "${facts.reference}" is forbidden: its artifacts grew past ${MAX_ANSWER_BYTES} bytes; the stream was stopped.`,
          { reference: facts.reference, url: facts.location.base, ...(progress.taskId === undefined ? {} : { task: progress.taskId }) },
        );
      }
      progress.artifacts.set(artifact.artifactId, appended ? { ...earlier, parts: [...earlier.parts, ...artifact.parts] } : artifact);
      return;
    }
  }
}

function takeTask(progress: Progress, task: Task): void {
  progress.taskId = task.id;
  if (task.status) takeStatus(progress, task.status);
  for (const artifact of task.artifacts) progress.artifacts.set(artifact.artifactId, artifact);
  takeUsage(progress, task.metadata);
}

function takeStatus(progress: Progress, status: NonNullable<Task['status']>): void {
  progress.state = status.state;
  if (status.message) progress.statusMessage = status.message;
}

/** The usage key a served Request's task carries (A2A-6), read beside the plain `usage` (DEL-37). */
const SERVED_USAGE_KEY = 'delegate-run/usage';

function takeUsage(progress: Progress, metadata: Record<string, unknown> | undefined): void {
  const usage = metadata?.usage ?? metadata?.[SERVED_USAGE_KEY];
  if (isJsonObject(usage)) progress.usage = usage;
}

/**
 * The call's result or its error (DEL-35, DEL-36): a completed task's last artifact (its first
 * data part, else its texts joined), checked against the card's output schema; any other final
 * state a `worker_error` naming the state and the agent's status text.
 */
function outcomeOf(facts: AgentCardFacts, progress: Progress, toolName: string): { value: unknown } | ProtocolError {
  const named = `The A2A agent "${facts.name}" (${facts.location.base})`;
  const data = { reference: facts.reference, url: facts.location.base, ...(progress.taskId === undefined ? {} : { task: progress.taskId }) };
  let value: unknown;
  if (progress.message) {
    value = partsValue(progress.message.parts);
  } else if (progress.state === TaskState.TASK_STATE_COMPLETED) {
    const last = [...progress.artifacts.values()].at(-1);
    value = last ? partsValue(last.parts) : progress.statusMessage ? partsValue(progress.statusMessage.parts) : undefined;
    if (value === undefined) return new DelegateError('worker_error', `${named} completed its task without an artifact or a message to return.`, data);
  } else {
    const state = stateName(progress.state);
    const said = progress.statusMessage ? textOf(progress.statusMessage.parts) : '';
    const because = said === '' ? '' : `: ${said}`;
    if (progress.state === TaskState.TASK_STATE_INPUT_REQUIRED || progress.state === TaskState.TASK_STATE_AUTH_REQUIRED) {
      return new DelegateError(
        'worker_error',
        `${named} stopped its task in state ${state}${because}; a delegation cannot answer an agent mid-task, so give the call everything the agent needs.`,
        { ...data, state },
      );
    }
    return new DelegateError('worker_error', `${named} ended its task in state ${state}${because}`, { ...data, state });
  }
  if (facts.outputSchema !== undefined) {
    const issues = validateAgainst(facts.outputSchema, value);
    if (issues.length > 0) {
      return new DelegateError('output_schema_validation_failed', `${named} returned a result its card's output schema refuses: ${formatIssues(issues)}`, {
        ...data,
        toolName,
        issues,
      });
    }
  }
  return { value };
}

/** A part list's value: its first data part's data, else its texts joined; `undefined` when it has neither. */
function partsValue(parts: readonly Part[]): unknown {
  const data = parts.find((part) => part.content?.$case === 'data');
  if (data?.content?.$case === 'data') return data.content.value ?? null;
  const text = textOf(parts);
  return text === '' && !parts.some((part) => part.content?.$case === 'text') ? undefined : text;
}

function textOf(parts: readonly Part[]): string {
  return parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** `completed`, `failed`, `input-required`…: A2A's names of the states, as users read them. */
function stateName(state: TaskState | undefined): string {
  if (state === undefined) return 'unknown (the agent sent no final state)';
  return (TaskState[state] ?? String(state))
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replaceAll('_', '-');
}

/** The agent could not be reached or broke the protocol: `delegate_not_found` with the cause (DEL-36). */
function agentUnreachable(facts: AgentCardFacts, error: unknown): ProtocolError {
  return new DelegateError(
    'delegate_not_found',
    `The A2A agent "${facts.name}" (${facts.location.base}) could not be reached: ${(error as Error).message ?? String(error)}`,
    {
      reference: facts.reference,
      url: facts.location.base,
    },
  );
}

/** The agent's task outlived the activity timeout (TOOL-24, DEL-35): `activity_error` naming the state it was last in. */
function pastActivityTimeout(facts: AgentCardFacts, progress: Progress, toolName: string, ms: number): ProtocolError {
  return new ActivityError(
    'activity_error',
    `The A2A agent "${facts.name}" (${facts.location.base}) had not finished its task within the activity timeout of ${ms / 1000} s (last in state ${stateName(progress.state)}); its task was cancelled.`,
    { toolName, url: facts.location.base, timeoutMs: ms, ...(progress.taskId === undefined ? {} : { task: progress.taskId }) },
  );
}

/** Asks the agent to cancel its task (DEL-36), waiting no longer than {@link CANCEL_TIMEOUT_MS}; its answer or failure changes nothing. */
async function cancelTask(client: Client, taskId: string | undefined): Promise<void> {
  if (taskId === undefined) return;
  await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) }).catch(() => undefined);
}

/**
 * The usage an agent reported (DEL-37): `metadata.usage` (or a served Request's `delegate-run/usage`) of its task or last status update, with
 * token counts and `costUsd` as our trace writes them. Tokens without a cost make the cost unknown
 * (`null`); nothing reported adds nothing.
 */
function remoteUsage(reported: Record<string, unknown> | undefined, ms: number): UsageSummary | undefined {
  if (!reported) return undefined;
  const count = (key: string): number => {
    const value = reported[key];
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
  };
  const cost = reported.costUsd;
  const usage = emptyUsage(ms);
  usage.inputTokens = count('inputTokens');
  usage.outputTokens = count('outputTokens');
  usage.cacheReadTokens = count('cacheReadTokens');
  usage.cacheWriteTokens = count('cacheWriteTokens');
  usage.steps = count('steps');
  usage.toolCalls = count('toolCalls');
  const tokens = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  usage.costUsd = typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? cost : tokens > 0 ? null : 0;
  return usage;
}

function emptyUsage(ms: number): UsageSummary {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, steps: 0, toolCalls: 0, ms };
}

/** Waits `ms`, or rejects as the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** The body, failing with what `tooLarge` throws once more than `maxBytes` have come. */
function capped(body: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: () => never): ReadableStream<Uint8Array> {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) tooLarge();
        controller.enqueue(chunk);
      },
    }),
  );
}
