/** The Runtime: owns the registries (message handlers, Activities, run preparers) and starts runs. */
import { PendingActivities } from './pending-activities.js';
import { SolutionSchemaCache } from './solution-schema-cache.js';
import { ActivityRegistry, type ActivityOptions } from './activity-registry.js';
import { CONSULT_ACTIVITY } from './advisors.js';
import type { ToolRule } from './tool-rules.js';
import type { SandboxSpec } from './file-tools.js';
import { consultAdvisor } from './consult-advisor.js';
import type { Model, ProviderFile } from './model.js';
import type { Budget } from './budget.js';
import type { RemoteChildRunner } from './remote-child.js';
import { type ProtocolError, UsageError } from './errors.js';
import { defaultHandlers } from './builtin-handlers.js';
import type { HandlerRegistry } from './handlers.js';
import { parseRequestText, validateRequest, type LoadedRequest } from './load-request.js';
import { runRequest } from './run-loop.js';
import { JournalReplay, journalStart, requestHash, type JournalOpener, type JournalStore } from './journal.js';
import type { RunTrace, Tracer } from './trace.js';
import type { TierCatalog } from './delegate-tool.js';
import type { Call, Message, RequestDocument, ToolSchema } from './types.js';
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
   * Ends this run with `error` once the calls of the current step (or plan) have settled: no
   * further model call is made and the run fails with that error (LOOP-18). The first ending wins.
   */
  endRun(error: ProtocolError): void;
  /** @deprecated Starts unlinked runs (no parent, depth, budget or bounds): use `runChild`. */
  runtime: Runtime;
  /** @deprecated The run's public options; a child's are chosen by `runChild`. */
  options: RunOptions;
  callId: string;
  toolName: string;
  instance: string | undefined;
  /** Aborts when the run is cancelled. */
  signal: AbortSignal;
  /** Emits trace events in this run's name. */
  trace: RunTrace;
  /** @deprecated Rolls a descendant run's total usage into this run's `usageTotal`; `runChild` does it. */
  addDescendantUsage(usage: UsageSummary): void;
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
 * Transforms a document before its run starts (e.g. up-front delegate resolution); `run` says which
 * run it prepares and, by `run.root`, its tree (LOOP-19).
 */
export type RunPreparer = (request: LoadedRequest, options: RunOptions, runtime: Runtime, run: RunInfo) => Promise<LoadedRequest> | LoadedRequest;

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

/** Options of a Runtime. */
export interface RuntimeOptions {
  handlers?: HandlerRegistry;
  activities?: Record<string, Activity>;
  preparers?: RunPreparer[];
  /** How {@link Runtime.load} reads files (`createRuntime` gives the file system's). */
  readRequestFile?: RequestFileReader;
  /**
   * What the core knows of the model catalog: its tiers and which models may delegate, for the
   * built-in `delegate` tool (DEL-23). Without it the tool is never offered.
   */
  tierCatalog?: TierCatalog;
  /** How a journal given by location is opened (`createRuntime` gives the file system's JSONL journal, JOURNAL-1). */
  openJournal?: JournalOpener;
  /** How long one call's Activity may run before its call fails with `activity_error` (TOOL-24; default: no limit). */
  activityTimeoutMs?: number;
}

export { DELEGATE_ACTIVITY } from './constants.js';

/** Owns the registries a run uses; no hidden global state. */
export class Runtime {
  readonly handlers: HandlerRegistry;
  readonly activities = new ActivityRegistry();
  /** The tiers and delegation flags of the model catalog (DEL-23), when the runtime was given them. */
  readonly tierCatalog: TierCatalog | undefined;
  /** Solution schemas composed by this runtime's runs, shared between equal steps (MSG-26). */
  readonly solutionSchemas = new SolutionSchemaCache();
  /** Where child runs go instead of running in process (QUEUE-1): set by {@link Runtime.useChildRunner}. */
  childRunner: RemoteChildRunner | undefined;
  /** How long one call's Activity may run (TOOL-24), when bounded. */
  readonly activityTimeoutMs: number | undefined;
  /** The Activities this runtime's runs are waiting for; a host whose event loop emptied fails them (ERR-8, CLI-27). */
  readonly pendingActivities = new PendingActivities();
  private readonly runPreparers: RunPreparer[] = [];
  private readonly treeEndHooks: TreeEndHook[] = [];
  private readonly readRequestFile: RequestFileReader | undefined;
  private readonly openJournal: JournalOpener | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.handlers = options.handlers ?? defaultHandlers();
    this.readRequestFile = options.readRequestFile;
    this.openJournal = options.openJournal;
    this.tierCatalog = options.tierCatalog;
    this.activityTimeoutMs = options.activityTimeoutMs;
    // The consult tool's Activity runs nothing local on the document's behalf (ADV-8).
    this.registerActivity(CONSULT_ACTIVITY, consultAdvisor, { runsUntrusted: true });
    for (const [name, activity] of Object.entries(options.activities ?? {})) this.registerActivity(name, activity);
    for (const preparer of options.preparers ?? []) this.registerPreparer(preparer);
  }

  /** Registers (or replaces) an Activity under a name, with what the core must know about it. */
  registerActivity(name: string, activity: Activity, options: ActivityOptions = {}): this {
    this.activities.register(name, activity, options);
    return this;
  }

  /** Adds a preparer, run (in registration order) on every document before its run starts. */
  registerPreparer(preparer: RunPreparer): this {
    this.runPreparers.push(preparer);
    return this;
  }

  /** Sends every child run this runtime starts to `runner` (a queue, QUEUE-1), or back in process with `undefined`. */
  useChildRunner(runner: RemoteChildRunner | undefined): this {
    this.childRunner = runner;
    return this;
  }

  /** Adds a hook told when a run tree ends (LOOP-19). */
  onTreeEnd(hook: TreeEndHook): this {
    this.treeEndHooks.push(hook);
    return this;
  }

  /** Tells every tree-end hook, in registration order, that the tree `tree` ended (LOOP-19); a hook that fails is skipped. */
  async endTree(tree: string): Promise<void> {
    for (const hook of this.treeEndHooks) {
      try {
        await hook(tree);
      } catch {
        // Releasing is best effort: the run's outcome is already decided.
      }
    }
  }

  /** The preparers, in registration order. */
  get preparers(): readonly RunPreparer[] {
    return this.runPreparers;
  }

  /** True when an Activity of this name is registered. */
  hasActivity(name: string): boolean {
    return this.activities.has(name);
  }

  /** Parses and validates Request text from `location`. */
  parse(text: string, location: string): LoadedRequest {
    return parseRequestText(text, location, this.handlers);
  }

  /** Validates an in-memory document (a plain object) as if loaded from `location`. */
  validate(document: unknown, location = 'inline.json'): LoadedRequest {
    return validateRequest(document, location, this.handlers);
  }

  /** Reads (through the Runtime's `readRequestFile`), parses and validates a Request file. */
  async load(path: string): Promise<LoadedRequest> {
    if (!this.readRequestFile) {
      throw new UsageError(
        `Cannot load ${path}: this Runtime reads no files. Create it with createRuntime(), give it { readRequestFile }, or pass the text to runtime.parse(text, location).`,
      );
    }
    return this.parse(await this.readRequestFile(path), path);
  }

  /** Runs a loaded Request (or a plain document) to completion. Never throws for run failures. */
  async run(request: LoadedRequest | RequestDocument, options: RunOptions = {}): Promise<RunResult> {
    const loaded = 'document' in request ? request : this.validate(request);
    if (options.journal === undefined) return runRequest(this, loaded, options);
    const store = this.journalStore(options.journal, 'create');
    try {
      return await runRequest(this, loaded, options, { journal: { store } });
    } finally {
      if (typeof options.journal === 'string') store.close();
    }
  }

  /**
   * Continues the run tree a journal holds (JOURNAL-3 to JOURNAL-9): the same request, input and
   * options, every journaled model answer replayed and every finished call's outcome reused, the
   * new events appended to the same journal. A Request document that changed since is refused
   * unless `changed` is set (JOURNAL-8). Throws a UsageError for a journal that cannot be resumed;
   * never throws for run failures.
   */
  async resume(journal: string | JournalStore, options: ResumeOptions = {}): Promise<RunResult> {
    const store = this.journalStore(journal, 'resume');
    try {
      const start = journalStart(store);
      const loaded = options.request ?? (await this.load(start.request));
      const hash = requestHash(loaded.document);
      if (start.requestHash !== undefined && start.requestHash !== hash && !options.changed) {
        throw new UsageError(
          `The Request ${start.request} changed since the journal ${store.location} began (its hash was ${start.requestHash}, now ${hash}); resume anyway with --resume-changed (library: { changed: true }), knowing that replayed answers were given to the old document.`,
          { journal: store.location, request: start.request },
        );
      }
      const { request: _request, changed: _changed, ...given } = options;
      const overrides = Object.keys(given).filter((key) => OVERRIDABLE.has(key) && given[key as keyof typeof given] !== undefined);
      const run: RunOptions = {
        ...start.options,
        ...given,
        ...(start.input === undefined ? {} : { input: start.input }),
        runId: start.run,
      };
      return await runRequest(this, loaded, run, { journal: { store, replay: new JournalReplay(store.events), overrides } });
    } finally {
      if (typeof journal === 'string') store.close();
    }
  }

  private journalStore(journal: string | JournalStore, mode: 'create' | 'resume'): JournalStore {
    if (typeof journal !== 'string') return journal;
    if (!this.openJournal) {
      throw new UsageError(
        `Cannot open the journal ${journal}: this Runtime writes no files. Create it with createRuntime(), give it { openJournal }, or pass a JournalStore.`,
      );
    }
    return this.openJournal(journal, mode);
  }
}

/** The options a resume may be given again: limits and observers, which do not change what was already done (JOURNAL-3). */
const OVERRIDABLE: ReadonlySet<string> = new Set(['maxSteps', 'maxConcurrency', 'maxRuns', 'budget']);
