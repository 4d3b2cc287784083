/** The trace's vocabulary: every event the runtime emits and the fields each carries (spec/trace.md). */
import type { ErrorCode, ErrorJson } from '../errors.js';
import type { ProviderMessage, SchemaForm } from '../model.js';
import type { JsonSchema, RequestConfig } from '../types.js';
import type { Usage } from '../usage.js';
import type { UsageSummary } from '../usage.js';

/** The options of the top run that a resume takes from the journal (JOURNAL-3): JSON data only. */
export interface JournaledOptions {
  maxSteps?: number;
  maxDepth?: number;
  resolve?: 'runtime' | 'upfront';
  maxConcurrency?: number;
  maxRuns?: number;
  budget?: { tokens?: number; costUsd?: number };
  trusted?: boolean;
  name?: string;
}

/** The fields every event carries, whatever its name (TRACE-1). */
export interface TraceEventBase {
  /** ISO 8601 time. */
  ts: string;
  /** A `noun.verb` name. */
  event: string;
  /** The id of the run the event belongs to. */
  run: string;
  /** The parent run's id, `null` at the top. */
  parent: string | null;
  /** 0 at the top (DEL-14). */
  depth: number;
}

/** The fields of a call's events (TRACE-6, TRACE-8). */
interface CallFields {
  /** The call id (CALL-2). */
  call: string;
  tool: string;
}

/** The fields of a delegation's events (TRACE-7). */
interface DelegateFields {
  /** The delegating call's id. */
  call: string;
  /** The child run's id. */
  child: string;
}

/** What `delegate.started` adds for a worker of the built-in `delegate` tool (TRACE-17, DEL-27). */
export interface WorkerStartFields {
  /** `minimal` or `explicit`, as the call's `context` said. */
  contextMode: 'minimal' | 'explicit';
  /** How many items `context.include` named (0 for `minimal`). */
  contextReferenceCount: number;
  /** The task's size in tokens, estimated as its characters / 4, rounded up. */
  taskTokens: number;
  /** How many tools the caller asked to lend: the distinct names of `allowed_tools`, else of all its own tools (an addition). */
  allowedToolCount: number;
  /** The names of `allowed_tools` the worker did not get: `delegate` always, and names that are not the caller's tools. */
  droppedTools: string[];
}

/** What `delegate.failed` adds for a worker of the built-in `delegate` tool (TRACE-17, DEL-26). */
export interface WorkerFailureFields {
  /** The failure mode of the call's result (`worker_error`, `max_tokens_exceeded`, …). */
  failureMode: string;
  /** For `insufficient_context`: the worker's `need_context` request `{missing, why}`. */
  insufficientContextRequest: { missing: string[]; why: string };
}

/** A delegation's usage in `delegate.completed` (TRACE-7, TRACE-17): the child's total, and its model. */
export type DelegateUsage = UsageSummary & {
  /** The child's model spec (in a replayed run, the model it stands for), or `null`. */
  model: string | null;
  /** True when the usage is what a delegate running elsewhere reported, not a run of this tree (an A2A agent, DEL-37). */
  remote?: true;
};

/**
 * Event name → the fields that event carries besides the common ones. `RunTrace.emit` takes a
 * known name only with exactly these fields, so a missing or misspelt field is a type error.
 */
export interface TraceEventMap {
  /** TRACE-3. */
  'run.started': {
    /** The resolved location: absolute file path, URL or `anonymous:<tool>`. */
    request: string;
    name: string;
    /** The model spec, `null` when the run has none. */
    model: string | null;
    /** The input the run was given, or `null`. */
    input: unknown;
    /** The hash of the run's Request document (JOURNAL-8; an addition). */
    requestHash?: string;
    /** The names of the tools the run is offered, in order (TRACE-3; an addition): absent when it failed before they were known. */
    tools?: string[];
    /** The OpenTelemetry trace id of the run's span, when its spans are exported (TEL-7; an addition). */
    traceId?: string;
  };
  /** JOURNAL-2: the top run of a run with a journal, after its `run.started`: what a resume needs besides the request and input. */
  'journal.started': {
    /** The run options a resume takes again (JOURNAL-3). */
    options: JournaledOptions;
    /** What the front end recorded to start the run the same way (the CLI's flags). */
    settings: Record<string, unknown>;
  };
  /** JOURNAL-9: a resume began, in the top run, before anything else it appends. */
  'journal.resumed': {
    /** How many events the journal held. */
    events: number;
    /** The partial last line that was ignored (JOURNAL-7), or `null`. */
    ignored: string | null;
    /** Flags or options given again that replaced the journal's (JOURNAL-3). */
    overrides: string[];
  };
  /** JOURNAL-6: a run the journal shows started is entered again on resume, instead of a second `run.started`. */
  'run.resumed': {
    request: string;
    name: string;
    model: string | null;
  };
  /** JOURNAL-4: a model answer taken from the journal instead of asked again; its `model.response` is earlier in the journal. */
  'model.replayed': {
    step: number;
    attempt: number;
    usage: Usage;
    costUsd: number | null;
  };
  /** JOURNAL-5: a call whose execution the journal shows finished, not run again; its `call.started` and end are earlier in the journal. */
  'call.replayed': CallFields & {
    /** How the execution ended. */
    outcome: 'completed' | 'failed';
  };
  /** TRACE-4: one per attempt. */
  'model.request': {
    step: number;
    /** 0 for the first ask, then re-asks. */
    attempt: number;
    /** Exactly what the model was sent (MSG-18), attachment files by `{path, mediaType, bytes}` only (ATT-7). */
    messages: TracedProviderMessage[];
    /** The Solution schema sent (TOOL-7). */
    schema: JsonSchema;
    /** How strictly the provider is asked to enforce it (MODEL-16; an addition). */
    schemaForm?: SchemaForm;
  };
  /** TRACE-12: one per retry of a model call, before the wait. */
  'model.retry': {
    step: number;
    /** The attempt that failed: 1 for the first. */
    attempt: number;
    reason: string;
    waitMs: number;
  };
  /** TRACE-5: one per attempt. */
  'model.response': {
    step: number;
    attempt: number;
    /** The parsed answer, `null` when it was not JSON (then `text` holds the raw answer). */
    solution: unknown;
    text?: string;
    /** The model that answered. */
    model: string;
    usage: Usage;
    /** `null` when the price is unknown. */
    costUsd: number | null;
    /** A replayed answer's stand-in: the model its cassette entry names, priced as that model (CAS-14; an addition). */
    replayOf?: string;
    ms: number;
    /** How the answer's shape was asked for (MODEL-5). */
    responseFormat?: string;
    /** How strictly the provider enforced the Solution schema (MODEL-16; an addition). */
    schemaForm?: SchemaForm;
  };
  /** TRACE-6. */
  'call.started': CallFields & {
    /** The call's parameters (CALL-4). */
    params: Record<string, unknown>;
    instance: string | null;
  };
  /** TRACE-6. */
  'call.completed': CallFields & {
    /** The value the call produced, or `null`. */
    result: unknown;
    /** True when the call produced no value at all, so nothing was written (JOURNAL-5; an addition). */
    noResult?: true;
  };
  /** TRACE-6. */
  'call.failed': CallFields & { error: ErrorJson };
  /** TRACE-15: a call that was done before its batch began is not executed again (PLAN-10). */
  'call.skipped': CallFields & { reason: 'done' };
  /** TRACE-8. */
  'approval.requested': CallFields & { params: Record<string, unknown> };
  /** TRACE-8. */
  'approval.decided': CallFields & {
    /** The confirm hook's decision (a ConfirmDecision's `decision`). */
    decision: 'approved' | 'approved_session' | 'rejected' | 'edited';
    reason: string | null;
    /** Who decided, when the confirm hook says (TRACE-19; an addition). */
    by?: string;
  };
  /** TRACE-7. */
  'delegate.started': DelegateFields & {
    /** The resolved location of the child's Request. */
    delegate: string;
    /** The child's request name. */
    name: string;
    /** The `_delegate` reference as the tool or call wrote it: a path, a URL, `anonymous` or a name (an addition). */
    reference: string;
    /** Where a name was found (`document`: its `config.delegates`; `runtime`; `catalog`: the root folder's or the parent's server's), `null` for any other reference (DEL-21; an addition). */
    registry: 'document' | 'runtime' | 'catalog' | null;
    resolution: 'runtime' | 'upfront';
    /** The scopes used, `[]` when none. */
    scopes: string[];
    /** The child's model spec (in a replayed run, the model it stands for, CAS-15), or `null`. */
    model: string | null;
    /** The child's `config.tier` (for the `delegate` tool, the tier asked for), or `null`. */
    tier: NonNullable<RequestConfig['tier']> | null;
    /** The files the call handed to the child, without their bytes (TRACE-18, ATT-7); only when there were any. */
    attachments?: { path: string; mediaType: string; bytes: number }[];
  } & Partial<WorkerStartFields>;
  /** TRACE-7. */
  'delegate.completed': DelegateFields & {
    /** The child's total usage, with the model it ran on (TRACE-17). */
    usage: DelegateUsage;
  };
  /** TRACE-7: the child's own error, flat and as data; for a worker, its failure mode, and `child: null` when no child run started (TRACE-17). */
  'delegate.failed': Omit<DelegateFields, 'child'> & {
    child: string | null;
    code: ErrorCode;
    message: string;
    error: ErrorJson;
    /** What an A2A agent reported it used before it failed, with `remote: true` (DEL-37; an addition). */
    usage?: DelegateUsage;
  } & Partial<WorkerFailureFields>;
  /** TRACE-22: a worker process took up the job of a queued child run (QUEUE-8); one per attempt, before the child's `run.started`. */
  'queue.job': {
    /** The BullMQ job id (the child's run id). */
    job: string;
    /** The queue's name. */
    queue: string;
    /** The worker process, `<host>:<pid>`. */
    worker: string;
    /** 1 for the first attempt; more when a worker died and another took the job over. */
    attempt: number;
  };
  /** TRACE-24: the result of a queued child run came from a later attempt; what the earlier attempts paid is added to its usage (QUEUE-32). */
  'queue.retried': {
    /** The BullMQ job id. */
    job: string;
    /** The earlier attempts whose usage was added: 1, 2, … */
    attempts: number[];
    /** What they paid for their own model answers, tokens and dollars (`null` when a price is unknown). */
    usage: Usage & { costUsd: number | null };
  };
  /** TRACE-20: an `mcp` toolset's server was started or reached, and listed these tools (MCP-4). */
  'mcp.connected': { server: string; tools: string[] };
  /** TRACE-20: an `mcp` toolset's server could not be started or reached (MCP-6), or one of its tools (`tool`) is left out (MCP-21); the run goes on. */
  'mcp.failed': { server: string; tool?: string; message: string };
  /** TRACE-16: one per opinion an advisor gave, in an answer or through a consultation. */
  'advisor.opinion': {
    /** The step whose answer held it, or `null` for a consultation (then `call` says which). */
    step: number | null;
    /** The `consult_advisor` call that gave it, or `null` when an answer's `advisors` held it. */
    call: string | null;
    /** The advisor's id. */
    advisor: string;
    /** The instance it is about, or `null`. */
    instance: string | null;
    /** The opinion as the model wrote it. */
    opinion: Record<string, unknown>;
    /** Its vote (`calls`) read from the inline JSON, or `null` when it gave none. */
    votes: Record<string, number> | null;
  };
  /** TRACE-9. */
  'run.completed': {
    output: unknown;
    /** Only when the context has a meta message: the last meta the model wrote, or `null` (MSG-23). */
    meta?: Record<string, unknown> | null;
    /** The run's own usage (LOOP-15). */
    usage: UsageSummary;
    /** Own plus every descendant's (DEL-17). */
    usageTotal: UsageSummary;
  };
  /** TRACE-10: the error flat and as data. */
  'run.failed': {
    code: ErrorCode;
    message: string;
    error: ErrorJson;
    /** The run's own usage until it failed (JOURNAL-6; an addition). */
    usage?: UsageSummary;
    /** Own plus every descendant's (an addition). */
    usageTotal?: UsageSummary;
  };
}

/** The name of an event the runtime emits. */
export type TraceEventName = keyof TraceEventMap;

/** One emitted event of a known name, as listeners receive it. */
export type TraceEventOf<E extends TraceEventName> = TraceEventBase & { event: E } & TraceEventMap[E];

/** Any event the runtime emits, discriminated by `event`. */
export type KnownTraceEvent = { [E in TraceEventName]: TraceEventOf<E> }[TraceEventName];

/**
 * The fields argument of `RunTrace.emit` for an event name: exactly the map's fields for a known
 * name; for another name (an Activity's own event), any fields or none.
 */
export type TraceFieldsOf<E extends string> = E extends TraceEventName ? [fields: TraceEventMap[E]] : [fields?: Record<string, unknown>];

/** Every name of {@link TraceEventMap}, at run time. */
export const TRACE_EVENT_NAMES: readonly TraceEventName[] = Object.keys({
  'run.started': true,
  'journal.started': true,
  'journal.resumed': true,
  'run.resumed': true,
  'model.replayed': true,
  'call.replayed': true,
  'model.request': true,
  'model.retry': true,
  'model.response': true,
  'call.started': true,
  'call.completed': true,
  'call.failed': true,
  'call.skipped': true,
  'approval.requested': true,
  'approval.decided': true,
  'delegate.started': true,
  'delegate.completed': true,
  'delegate.failed': true,
  'advisor.opinion': true,
  'mcp.connected': true,
  'mcp.failed': true,
  'queue.job': true,
  'queue.retried': true,
  'run.completed': true,
  'run.failed': true,
} satisfies Record<TraceEventName, true>) as TraceEventName[];

const KNOWN: ReadonlySet<string> = new Set(TRACE_EVENT_NAMES);

/**
 * The event typed by its name when the runtime emits events of that name, else `undefined` (an
 * Activity's own event). Its fields are trusted, not checked: `RunTrace.emit` is typed by the map.
 */
export function knownTraceEvent(event: TraceEventBase): KnownTraceEvent | undefined {
  return KNOWN.has(event.event) ? (event as KnownTraceEvent) : undefined;
}

/** A sent message as `model.request` records it (ATT-7): its native-part files without their bytes. */
export type TracedProviderMessage = Omit<ProviderMessage, 'files'> & { files?: { path: string; mediaType: string; bytes: number }[] };
