/**
 * The contracts of a run, as types only: what an Activity is and receives, what a run is given and
 * gives back, the confirm hook, and how child runs hang off their tree or run elsewhere (QUEUE-1).
 * The files that implement them import this one; it imports no implementation by value.
 */
import type { Budget, BudgetMeter } from './budget.js';
import type { ProtocolError } from './errors.js';
import type { SandboxSpec } from './tools/file-tools.js';
import type { JournalReplay, JournalStore } from './trace/journal.js';
import type { LoadedRequest } from './messages/load-request.js';
import type { Model, ProviderFile } from './model.js';
import type { ToolRule } from './types.js';
import type { RunTrace, TraceEvent, Tracer } from './trace/trace.js';
import type { TreeBounds, TreeLimits } from './run/tree-bounds.js';
import type { Call, Message, ToolSchema } from './types.js';
import type { UsageSummary } from './usage.js';

/** Facts about the run an Activity is called from. */
export interface RunInfo {
  id: string;
  /** The request name (`meta.name`, file name, `anonymous:<tool>`). */
  name: string;
  /** Where the document came from; relative delegates resolve against it. */
  location: string;
  depth: number;
  parent: string | null;
  /** The ids of the runs above it, the top run first (its parent last): what a session approval's scope is judged by (CALL-11). */
  lineage?: readonly string[];
  /** The id of its tree's top run (its own id for a top run): what a run tree keeps together (WRK-8, CALL-11). Absent in a RunInfo built by hand. */
  root?: string;
  /** False for documents fetched from hosts not trusted to run local Activities. */
  trusted: boolean;
  model: Model | undefined;
  /** The names the run's document gives delegates (its `config.delegates`, DEL-21), if any. */
  delegates?: Readonly<Record<string, string>>;
  /** True for a worker: a run the built-in `delegate` tool started (DEL-24). */
  worker?: boolean;
  /**
   * The live model the run uses or, replayed, stands for (CAS-15), as the runtime's tier catalog
   * says (DEL-23): what gating and tier choice go by. Absent without a catalog, or when unknown.
   */
  standsFor?: string;
  /** The run's document's `config.delegation`, if set: its workers carry it (DEL-24). */
  delegation?: boolean | { recursive?: boolean };
  /** The run's document's `config.attachments`, if set: the caller's policy of its delegations (ATT-3). */
  attachments?: Record<string, unknown>;
  /** The run's document's `config.toolRules` (TOOL-21): tools it lends a worker are the tools as the rules leave them. */
  toolRules?: readonly ToolRule[];
  /** The run's `files` sandboxes (FILES-2), if it declares any: its attachments may be read from them (ATT-2). */
  sandboxes?: Readonly<Record<string, SandboxSpec>>;
}

/** A run an Activity starts on behalf of its call (the Delegation Activity's child, DEL-8). */
export interface ChildRunRequest {
  /** The document to run, its context already isolated (DEL-9). */
  request: LoadedRequest;
  /** Values for its input message. */
  input?: unknown;
  /** Its model (default: the caller's). */
  model?: Model;
  /** Whether it may run local Activities. */
  trusted: boolean;
  /**
   * The messages `request.document.context` ends with that are not the resolved document's own (DEL-9):
   * the scoped parent messages and the attachments' messages. The Delegation Activity gives them, so a
   * child run elsewhere is sent as its reference and these (QUEUE-23).
   */
  scoped?: Message[];
  /** Says, in a refusal, what was being started: `Delegating "x" to ./y.json`. */
  description: string;
  /** Told the child's run id once the child is admitted, before it starts (for `delegate.started`). */
  onStart?: (child: string) => void;
  /** The child is a worker of the built-in `delegate` tool, not offered `delegate` itself unless its document allows it (DEL-24). */
  worker?: boolean;
  /** Attachments the child's model receives as native parts on its first user message (ATT-6). */
  files?: ProviderFile[];
}

/** What an Activity receives besides `(call, tool, context)`. */
export interface ActivityEnvironment {
  run: RunInfo;
  /**
   * Starts a child run linked to this one (DEL-14, DEL-19, LOOP-13): one level deeper, sharing the
   * tree's budget meter, bounds, signal and tracer, with the caller's approvals and only the
   * options a child inherits (DEL-20); its usage rolls up into this run's total (DEL-17). A child
   * past the depth or run bound is refused with the bound's error before it starts.
   */
  runChild(child: ChildRunRequest): Promise<RunResult>;
  /** Throws the bound's error when no child could start now (depth, run-tree bound): checked before loading one. */
  checkChild(description: string): void;
  /**
   * Adds what a delegate running elsewhere, not as a run of this tree, reported it used for this
   * call (an A2A agent, DEL-37) to this run's total, as a child's total is added (DEL-17), and
   * to the tree's budget meter (LOOP-13).
   */
  addRemoteUsage(usage: UsageSummary): void;
  /**
   * Ends this run with `error` once the calls of the current step (or plan) have settled: no
   * further model call is made and the run fails with that error (LOOP-18). The first ending wins.
   */
  endRun(error: ProtocolError): void;
  /** The run's confirm hook, for approvals an Activity asks of its own (ATT-4); undefined when the run has none. */
  confirm: ConfirmHook | undefined;
  callId: string;
  toolName: string;
  instance: string | undefined;
  /** Aborts when the run is cancelled. */
  signal: AbortSignal;
  /** Emits trace events in this run's name. */
  trace: RunTrace;
  /**
   * The runtime's activity timeout in ms (TOOL-24), for an Activity that owns its cancellation and
   * is not timed by the runtime but has no child run to bound it (an A2A delegation, DEL-35).
   */
  activityTimeoutMs?: number;
}

/**
 * An Activity: an async function executing a call. `context` holds exactly the parent messages
 * the call's `_scopes` allow. Returning a message object appends it as is; any other value is
 * written at the call's `_outputPath`.
 */
export type Activity = ((call: Call, tool: ToolSchema, context: Message[], environment: ActivityEnvironment) => unknown) & {
  /**
   * `false` when running a call twice does harm (an email sent twice): a call that had started when
   * its run was interrupted is then not run again on resume without the confirm hook's approval
   * (JOURNAL-5). Absent or `true`: it runs again.
   */
  idempotent?: boolean;
};

/** A decision of the confirm hook; `by` says who decided, traced as `approval.decided.by` (TRACE-19). */
export type ConfirmDecision = (
  | { decision: 'approved' | 'approved_session' }
  | { decision: 'rejected'; reason?: string }
  | { decision: 'edited'; call: Call; reason?: string }
) & { by?: string };

/** What the confirm hook is asked about. */
export interface ConfirmRequest {
  call: Call;
  callId: string;
  tool: ToolSchema;
  toolName: string;
  run: RunInfo;
  /** Aborts when the run is cancelled; a prompt should stop asking then. */
  signal: AbortSignal;
  /**
   * True when the question is whether to run again a call that had started when its run was
   * interrupted, whose Activity is not idempotent (JOURNAL-5): asked whatever the tool's `_approval`.
   */
  rerun?: boolean;
}

/**
 * Called before every execution (approvals are one implementation of it). When the hook has an
 * `appliesTo` predicate, calls it says no to run without asking and without approval events.
 */
export type ConfirmHook = ((request: ConfirmRequest) => Promise<ConfirmDecision> | ConfirmDecision) & {
  appliesTo?: (request: ConfirmRequest) => boolean;
};

/** Options of one run. */
export interface RunOptions {
  /** The model; a run that needs one and has none fails with `usage_error`. */
  model?: Model;
  /** Values for the Request's input message. */
  input?: unknown;
  /** Model steps at most (default: the document's `config.maxSteps`, else 16). */
  maxSteps?: number;
  /** Delegation depth at most (default 5); the top run has depth 0. */
  maxDepth?: number;
  /** Delegate resolution timing (default `runtime`). */
  resolve?: 'runtime' | 'upfront';
  signal?: AbortSignal;
  /** Receives every event of this run and its descendants. */
  tracer?: Tracer;
  confirm?: ConfirmHook;
  /** Whether the document may run local Activities (default true). */
  trusted?: boolean;
  /** Limits on the whole run tree (default: the document's `config.budget`). */
  budget?: Budget;
  /**
   * Model calls the run tree may have in flight at once (default 128); read by the top run. A
   * call waits for a free slot, and only the model's answering holds one.
   */
  maxConcurrency?: number;
  /**
   * Runs the run tree may start, the top run included (default 2000); read by the top run. A
   * delegation past it fails with `budget_exceeded`, and so does every run of the tree at its next
   * model call.
   */
  maxRuns?: number;
  /** A fixed run id (default: generated). */
  runId?: string;
  /** The name the run carries (default: the loaded request's). */
  name?: string;
  /**
   * Makes the run durable (JOURNAL-1): every event of its tree is written to this journal before the
   * run goes on, and {@link Runtime.resume} continues the tree from it after a crash. A location is
   * opened (replaced) through the Runtime's `openJournal`; a store is written as given. Read by the top run.
   */
  journal?: string | JournalStore;
  /** What a front end records in the journal to start the run the same way on resume (the CLI's flags, JOURNAL-3). */
  journalSettings?: Record<string, unknown>;
}

/**
 * Options of {@link Runtime.resume}. The request, input and run options come from the journal
 * (JOURNAL-3); only what cannot change the run's course may be given again.
 */
export interface ResumeOptions extends Pick<RunOptions, 'model' | 'signal' | 'tracer' | 'confirm' | 'maxSteps' | 'maxConcurrency' | 'maxRuns' | 'budget'> {
  /** The Request, already loaded (default: loaded from the journal's location through `load`). */
  request?: LoadedRequest;
  /** Resume even though the Request document changed since the journal began (JOURNAL-8). */
  changed?: boolean;
}

/**
 * The outcome of a run. `context` is the run's context as it ended (LOOP-17): what it was given,
 * every write with its `_call`, the errors and the plan with its progress; a later run given it
 * goes on from there and runs no done call again (PLAN-10). Absent when the run failed before its
 * context was opened.
 */
export type RunResult =
  | {
      ok: true;
      run: string;
      output: unknown;
      /** Only when the context has a meta message: the last meta the model wrote, or `null` when it wrote none (MSG-23). */
      meta?: Record<string, unknown> | null;
      usage: UsageSummary;
      usageTotal: UsageSummary;
      context?: Message[];
    }
  | { ok: false; run: string; error: ProtocolError; usage: UsageSummary; usageTotal: UsageSummary; context?: Message[] };

/**
 * Told a run tree's id (its top run's) once that top run has ended, whether it succeeded, failed or
 * was cancelled: where what was kept for the tree is released (LOOP-19). Its failure is ignored.
 */
export type TreeEndHook = (tree: string) => Promise<void> | void;

/**
 * Reads the text of the Request file at `path` for {@link Runtime.load}; throws a RequestError
 * naming the path when there is none or it cannot be read. The core reads no files itself.
 */
export type RequestFileReader = (path: string) => Promise<string>;

/** What every run of a tree shares: the budget meter (when the tree has a budget) and the bounds. */
export interface TreeShares {
  meter: BudgetMeter | undefined;
  bounds: TreeBounds;
  /** When the tree has a journal (JOURNAL-1): what it replays from it, empty for a tree that starts afresh. */
  journal?: JournalReplay;
  /** On a queue's worker: where a non-idempotent call is recorded before its Activity runs (QUEUE-31). */
  startedCalls?: StartedCallLog;
  /**
   * When the tree's journal flushes in groups (JOURNAL-2): a promise that every event emitted so far
   * is on the disk, or `undefined` when it is. Awaited before each effect an event records.
   */
  whenDurable?: () => Promise<void> | undefined;
}

/** The journal of a top run: where its events go and, on resume, what it replays (JOURNAL-1). */
export interface RunJournal {
  store: JournalStore;
  /** Absent when the run starts afresh. */
  replay?: JournalReplay;
  /** The options given again on resume that replaced the journal's (JOURNAL-3). */
  overrides?: string[];
}

/**
 * How a run hangs off its tree: the calling run and call (none for a top run), and what the tree
 * shares. A top run given a link without a parent uses the link's tree instead of creating one.
 */
export interface RunLink {
  /** `lineage`: the callers' run ids, the top run first (CALL-11); absent, the parent alone is known. */
  parent?: { run: string; depth: number; callId: string; root?: string; lineage?: readonly string[] };
  /** Absent for a top run, which creates its tree's. */
  tree?: TreeShares;
  /** A top run's journal (JOURNAL-1); a child's is its tree's. */
  journal?: RunJournal;
  /** The run is a worker the built-in `delegate` tool started (DEL-24). */
  worker?: boolean;
  /** Attachments its model receives as native parts (ATT-6). */
  files?: ProviderFile[];
}

/**
 * Starts a run linked into a tree: the loop's own entry, handed down to the calls in their scope so
 * that a call starting a child (DEL-14) never imports the loop that runs it.
 */
export type RunStarter = (request: LoadedRequest, options: RunOptions, link: RunLink) => Promise<RunResult>;

/**
 * Everything a child run needs, as JSON (QUEUE-2): its id and place in the tree, the resolved
 * Request with its isolated context, its input, its model spec, trust, the options a child
 * inherits (DEL-20) and the tree's limits.
 */
export interface RemoteChild {
  /** The child's run id, derived from its place in the tree (JOURNAL-6). */
  id: string;
  /** The calling run and call, the caller's depth and the tree's top run. */
  parent: { run: string; depth: number; callId: string; root: string; lineage?: readonly string[] };
  /** The resolved Request: its document (context already isolated, DEL-9), location and name. */
  request: LoadedRequest;
  input?: unknown;
  /** The spec of the child's model (`Model.id`), or null when it has none. */
  model: string | null;
  /** The live model a replayed model stands for (CAS-15), when known. */
  standsFor?: string;
  trusted: boolean;
  /**
   * The messages the child's context has after its document's own (DEL-9): the scoped parent
   * messages and the attachments' messages, when `request` is a document resolved from a
   * reference, so a queue can send the reference and these instead of the document (QUEUE-23).
   */
  scoped?: Message[];
  /** A worker of the built-in `delegate` tool (DEL-24). */
  worker?: boolean;
  /** Native attachment parts (ATT-6), their bytes as base64. */
  files?: { path: string; mediaType: string; base64: string }[];
  /** The caller's options a child inherits (DEL-20), the JSON ones. */
  options: Pick<RunOptions, 'maxDepth' | 'resolve' | 'maxSteps'>;
  /** The tree's budget (LOOP-13), when it has one. */
  budget?: Budget;
  /** The tree's run and model-call bounds (DEL-19). */
  limits: { maxRuns: number; maxConcurrency: number };
  /**
   * When the tree has a journal (QUEUE-12): which session of the tree this is (0 for the run that
   * began the journal, n for its nth resume, JOURNAL-9) and, when resuming, the journaled events of
   * this child's subtree, which its run replays as in process (JOURNAL-4 to JOURNAL-6).
   */
  journal?: { session: number; events: TraceEvent[] };
}

/** What the calling process gives a remote child besides its description: the run's signal and the tree's tracer. */
export interface RemoteChildHooks {
  signal: AbortSignal;
  tracer: Tracer | undefined;
}

/**
 * Runs child runs elsewhere (QUEUE-1): a Runtime given one sends every child run it starts to it
 * instead of running it in process. Resolves to the child's result; a failure to reach the other
 * side resolves to a failed result, never throws.
 */
export interface RemoteChildRunner {
  run(child: RemoteChild, hooks: RemoteChildHooks): Promise<RunResult>;
  /**
   * The budget meter of the tree `root` as every process of the tree shares it (QUEUE-6), in its
   * `session` when the tree is resumed (QUEUE-12); a top run with a budget takes its meter from
   * here when the runner has one.
   */
  meter?(root: string, limit: Budget, session?: number): BudgetMeter;
  /**
   * The run bounds of the tree `root`, whose top run starts in this process, as every process of
   * the tree shares them (QUEUE-20): the tree's one count of runs starts again at 1, the top run.
   */
  bounds?(root: string, limits: TreeLimits, session?: number): TreeBounds;
}

/** A call of a non-idempotent Activity as a queued job records it before the Activity runs (QUEUE-31). */
export interface StartedCall {
  run: string;
  call: string;
  tool: string;
  params: Record<string, unknown>;
}

/**
 * Where a queued job's non-idempotent calls are recorded as they start (QUEUE-31), and what earlier
 * attempts at the job recorded: an attempt that took the job over treats those as a resumed
 * journal's started calls (JOURNAL-5), so such a call is asked about before it runs again.
 */
export interface StartedCallLog {
  /** True when an earlier attempt at the job started this call: the same run, call id and tool, whatever its parameters. */
  startedBefore(call: Omit<StartedCall, 'params'>): boolean;
  /** Records a call before its Activity runs; rejects when the record cannot be made, and the call is then not run. */
  record(call: StartedCall): Promise<void>;
}
