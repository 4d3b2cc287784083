/** The Delegation Activity: runs the Request a `_delegate` names in an isolated child run and returns its output. */
import { liveModelName, type Model } from '../protocol/model.js';
import { type AttachmentPlaces, callAttachments, handOver, takesAttachments } from './call-attachments.js';
import { DelegateError, type ProtocolError } from '../protocol/errors.js';
import type { TraceContext } from '../protocol/trace/trace.js';
import type { Activity, ActivityEnvironment, ChildRunRequest, RunResult } from '../protocol/contracts.js';
import type { TraceEventMap, WorkerFailureFields } from '../protocol/trace/events.js';
import { metaValue } from '../protocol/tools/tools.js';
import type { Call, Message, RequestDocument, ToolSchema } from '../protocol/types.js';
import { isMetaProperty } from '../protocol/types.js';
import type { CatalogEntry, ResolvedRequest, ResolveContext } from '../resolvers/resolver.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { isA2aReference } from '../resolvers/reference-forms.js';

/** Resolves references (the ResolverRegistry satisfies this). */
export interface DelegateResolver {
  resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest>;
  /** Reads a `delegate-serve` catalog (WRK-2); the ResolverRegistry has it. */
  catalog?(reference: string, context: ResolveContext): Promise<CatalogEntry[]>;
}

/**
 * Chooses a child run's model (DEL-16): own model, else own tier, else the caller's; it may refuse
 * a document the model cannot run, naming the document at `location` (MODEL-13).
 */
export type ChildModelChooser = (
  document: RequestDocument,
  inherited: Model | undefined,
  environment: ActivityEnvironment,
  location?: string,
) => Model | undefined;

/** What the Delegation Activity needs. */
export interface DelegateActivityOptions extends AttachmentPlaces {
  resolvers: DelegateResolver;
  chooseModel?: ChildModelChooser;
  /** The URL resolver whose host rules A2A agents follow (DEL-32); without it an A2A `_delegate` is `delegate_forbidden`. */
  urls?: UrlResolver;
}

/** Runs a call whose `_delegate` names an A2A agent (DEL-31), loading the A2A SDK only then. */
async function delegateToA2a(
  call: Call,
  tool: ToolSchema,
  context: Message[],
  environment: ActivityEnvironment,
  urls: UrlResolver | undefined,
): Promise<unknown> {
  if (!urls) {
    throw new DelegateError(
      'delegate_forbidden',
      `The call to "${call._tool}" names an A2A agent, but this runtime has no URL resolver whose host rules it could follow.`,
    );
  }
  const { runA2aDelegation } = await import('../a2a/a2a-delegate.js');
  return runA2aDelegation(call, tool, context, environment, { urls });
}

/** The call's parameters without meta-properties: what the child receives as input. */
export function delegateInput(call: Call): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call).filter(([key]) => !isMetaProperty(key)));
}

/**
 * The child's isolated context before its input: its own messages, then the scoped parent
 * messages. The run appends the call's parameters as its input message, with the declared input
 * schema attached.
 */
export function isolatedContext(document: RequestDocument, scoped: readonly Message[]): Message[] {
  return [...document.context, ...scoped];
}

/** Creates the one Activity that executes every call whose tool (or call) carries `_delegate`. */
export function createDelegateActivity(options: DelegateActivityOptions): Activity {
  return async (call: Call, tool: ToolSchema, context: Message[], environment: ActivityEnvironment) => {
    const reference = metaValue(call, tool, '_delegate');
    if (typeof reference !== 'string') throw new DelegateError('delegate_not_found', `The call to "${call._tool}" has no _delegate reference.`);
    if (isA2aReference(reference)) return delegateToA2a(call, tool, context, environment, options.urls);
    // Too deep, or the tree past its run bound: refused before anything is loaded (DEL-14, DEL-19).
    environment.checkChild(`Delegating "${call._tool}" to ${reference}`);
    const resolved = await options.resolvers.resolve(reference, {
      base: environment.run.location,
      toolName: call._tool,
      tool,
      signal: environment.signal,
      trusted: environment.run.trusted,
      ...(environment.run.delegates === undefined ? {} : { delegates: environment.run.delegates }),
      ...traceContextOf(environment),
    });
    const attached = handOver(await callAttachments(call, tool, resolved.document, environment, options));
    const scoped = [...context, ...attached.messages];
    const document: RequestDocument = Object.assign({}, resolved.document, { context: isolatedContext(resolved.document, scoped) });
    const model = options.chooseModel ? options.chooseModel(resolved.document, environment.run.model, environment, resolved.location) : environment.run.model;
    const scopes = metaValue(call, tool, '_scopes');
    const { child, result } = await runDelegation(
      environment,
      {
        request: { document, location: resolved.location, name: resolved.name },
        input: takesAttachments(resolved.document) ? withoutAttachments(delegateInput(call)) : delegateInput(call),
        ...(attached.files === undefined ? {} : { files: attached.files }),
        ...(model === undefined ? {} : { model }),
        trusted: resolved.trusted,
        // What the child has besides its resolved document: a queued child travels as its reference and these (QUEUE-23).
        scoped,
        description: `Delegating "${call._tool}" to ${resolved.location}`,
      },
      {
        delegate: resolved.location,
        name: resolved.name,
        reference,
        registry: resolved.registry ?? null,
        resolution: metaValue(call, tool, '_resolve') === 'upfront' ? 'upfront' : 'runtime',
        scopes: Array.isArray(scopes) ? scopes : [],
        tier: resolved.document.config?.tier ?? null,
        ...(attached.records === undefined ? {} : { attachments: attached.records }),
      },
    );
    if (result.ok) return result.output;
    if (result.error.code === 'cancelled_by_user') throw result.error;
    throw new DelegateError(codeForParent(result.error), `The delegate "${resolved.name}" (${resolved.location}) failed: ${result.error.message}`, {
      child,
      delegate: resolved.location,
    });
  };
}

/** What `delegate.started` says of a delegation besides its call, its child and the child's model (TRACE-7). */
export type DelegationStart = Omit<TraceEventMap['delegate.started'], 'call' | 'child' | 'model'>;

/**
 * Runs a delegation's child (DEL-8) and traces it in the caller (TRACE-7): `delegate.started` once
 * the child is admitted, then `delegate.completed` with its total usage and model, or
 * `delegate.failed` with its error as data and what `failed` adds (a worker's failure mode,
 * TRACE-17). The one way the Delegation Activity and its layers (the `delegate` tool, `worker_call`)
 * start a child. Throws only what `runChild` throws before the child starts (a bound).
 */
export async function runDelegation(
  environment: ActivityEnvironment,
  request: Omit<ChildRunRequest, 'onStart'>,
  started: DelegationStart,
  failed: (error: ProtocolError) => Partial<WorkerFailureFields> = () => ({}),
): Promise<{ child: string; result: RunResult }> {
  const call = environment.callId;
  const model = liveModelName(request.model ?? environment.run.model);
  let child = '';
  const result = await environment.runChild(
    Object.assign({}, request, {
      onStart: (id: string) => {
        child = id;
        environment.trace.emit('delegate.started', { call, child, ...started, model });
      },
    }),
  );
  if (result.ok) {
    environment.trace.emit('delegate.completed', { call, child, usage: Object.assign({}, result.usageTotal, { model }) });
  } else {
    const { error } = result;
    environment.trace.emit('delegate.failed', { call, child, code: error.code, message: error.message, error: error.toJSON(), ...failed(error) });
  }
  return { child, result };
}

/** The input without the `attachments` parameter, which the child receives as messages instead (ATT-5). */
export function withoutAttachments(input: Record<string, unknown>): Record<string, unknown> {
  const { attachments: _files, ...rest } = input;
  return rest;
}

/** Child failures keep their code where the parent can act on it; everything else is a worker error. */
function codeForParent(error: ProtocolError): ProtocolError['code'] {
  switch (error.code) {
    case 'max_depth_exceeded':
    case 'max_steps_exceeded':
    case 'max_tokens_exceeded':
    case 'budget_exceeded':
    case 'invalid_model_output':
    case 'output_schema_validation_failed':
    case 'model_error':
    case 'rejected_by_user':
    case 'delegate_forbidden':
    case 'delegate_not_found':
    case 'invalid_request':
    case 'usage_error':
      return error.code;
    default:
      return 'worker_error';
  }
}

/** The trace context of the delegating call's span, for a fetch made on its behalf (TEL-6); nothing when spans are not exported. */
function traceContextOf(environment: ActivityEnvironment): { traceContext?: TraceContext } {
  const traceContext = environment.trace.tracer.contextOf(environment.run.id, environment.callId);
  return traceContext === undefined ? {} : { traceContext };
}
