/**
 * The built-in `delegate` tool's Activity (spec/delegate-tool.md DEL-23 to DEL-28): a layer on the one
 * child-run mechanism of the Delegation Activity. A call runs an anonymous worker Request — its
 * task, the included context, the lent tools — on the tier's model, and always answers with a
 * typed outcome.
 */
import { CallError, ProtocolError, RequestError } from '../protocol/errors.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import type { Model } from '../protocol/model.js';
import { applyToolRules } from '../protocol/tools/tool-rules.js';
import type { Activity, ActivityEnvironment, RunInfo, RunResult } from '../protocol/contracts.js';
import type { WorkerFailureFields } from '../protocol/trace/events.js';
import type { Call, JsonSchema, Message, RequestDocument, ToolSchema } from '../protocol/types.js';
import { runDelegation } from './delegate.js';
import { type DelegateOutcome, failureOf, succeeded } from './delegate-outcome.js';
import { type DelegateCall, delegateCall, estimateTokens, lendTools, splitContext, WORKER_NAME, workerRequest } from './worker-request.js';

/** Chooses a worker's model for a tier, fresh (the caller's model only says which provider to prefer); throws `no_model_available_for_tier`. */
export type TierModelChooser = (tier: DelegateCall['tier'], caller: RunInfo) => Model;

/** What the `delegate` tool's Activity needs. */
export interface TierDelegateActivityOptions {
  /** The tier → model choice (DEL-28). */
  chooseModel: TierModelChooser;
  /** Validates the worker's Request like any document (DOC-5). */
  validate: (document: RequestDocument, location: string) => LoadedRequest;
}

/** Creates the Activity behind the built-in `delegate` tool. */
export function createTierDelegateActivity(options: TierDelegateActivityOptions): Activity {
  return async (call: Call, _tool: ToolSchema, context: Message[], environment: ActivityEnvironment): Promise<DelegateOutcome> => {
    const asked = delegateCall(call);
    const { included, tools: own } = splitContext(context);
    // The caller's tool rules hold for what it lends: a forbidden tool is not its to lend (TOOL-21).
    applyToolRules(own, environment.run.toolRules ?? []);
    const lent = lendTools(own, asked.allowed_tools);
    const request = loadWorker(options, workerRequest(asked, included, lent.tools, environment.run.delegation), call._tool);
    const schema = request.document.schema;
    const description = `Delegating a task to a worker of tier "${asked.tier}"`;
    // Every failed outcome is traced as delegate.failed with its failure mode (TRACE-17), those
    // that start no child run too (`child: null`): a dashboard built on events sees all of them.
    const refused = (thrown: unknown): DelegateOutcome => {
      const error = asProtocolError(thrown);
      const { code, message } = error;
      environment.trace.emit('delegate.failed', {
        call: environment.callId,
        child: null,
        code,
        message,
        error: error.toJSON(),
        ...failureFields(error, schema),
      });
      return failureOf(error, schema).outcome;
    };
    let model: Model;
    try {
      // Too deep, the tree past a bound, or no model for the tier: an outcome, with no child run (DEL-2).
      environment.checkChild(description);
      model = options.chooseModel(asked.tier, environment.run);
    } catch (error) {
      return refused(error);
    }
    let result: RunResult;
    try {
      ({ result } = await runDelegation(
        environment,
        { request, model, trusted: environment.run.trusted, description, worker: true },
        {
          delegate: WORKER_NAME,
          name: WORKER_NAME,
          reference: 'anonymous',
          registry: null,
          resolution: 'runtime',
          scopes: asked.context.mode === 'explicit' ? [...asked.context.include] : [],
          tier: asked.tier,
          contextMode: asked.context.mode,
          contextReferenceCount: asked.context.mode === 'explicit' ? asked.context.include.length : 0,
          taskTokens: estimateTokens(asked.task),
          allowedToolCount: lent.asked,
          droppedTools: lent.dropped,
        },
        (error) => failureFields(error, schema),
      ));
    } catch (error) {
      // A bound reached between the check above and the child's start: an outcome too.
      return refused(error);
    }
    return result.ok ? succeeded(result.output) : failureOf(result.error, schema).outcome;
  };
}

/** What `delegate.failed` adds for a worker's failed outcome (TRACE-17): its failure mode, and the request of a worker that lacked context. */
function failureFields(error: ProtocolError, schema: JsonSchema): Partial<WorkerFailureFields> {
  const failure = failureOf(error, schema);
  return { failureMode: failure.failureMode, ...(failure.request ? { insufficientContextRequest: failure.request } : {}) };
}

/** The worker's Request, validated; a call whose `output_schema` is not a schema fails with `invalid_params` (TOOL-11). */
function loadWorker(options: TierDelegateActivityOptions, document: RequestDocument, toolName: string): LoadedRequest {
  try {
    return options.validate(document, WORKER_NAME);
  } catch (error) {
    if (!(error instanceof RequestError)) throw error;
    throw new CallError(
      'invalid_params',
      `The ${toolName} call cannot make its worker's Request: ${error.problems.map((problem) => `${problem.pointer === '/schema' ? 'output_schema' : problem.pointer}: ${problem.message}`).join(' ')}`,
      {
        toolName,
        problems: error.problems,
      },
    );
  }
}

function asProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  throw error;
}
