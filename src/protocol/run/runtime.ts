/** The Runtime: owns the registries (message handlers, Activities, run preparers) and starts runs. */
import { PendingActivities } from '../calls/pending-activities.js';
import { SolutionSchemaCache } from './solution-schema-cache.js';
import { ActivityRegistry, type ActivityOptions } from '../calls/activity-registry.js';
import { CONSULT_ACTIVITY } from '../messages/advisors.js';
import { consultAdvisor } from '../calls/consult-advisor.js';
import type { Activity, RemoteChildRunner, RequestFileReader, ResumeOptions, RunInfo, RunOptions, RunResult, TreeEndHook } from '../contracts.js';
import { UsageError } from '../errors.js';
import { defaultHandlers } from '../messages/builtin-handlers.js';
import type { HandlerRegistry } from '../messages/handlers.js';
import { parseRequestText, validateRequest, type LoadedRequest } from '../messages/load-request.js';
import { runRequest } from './run-loop.js';
import { checkGivenInput } from '../messages/input.js';
import { JournalReplay, journalStart, requestHash, type JournalOpener, type JournalStore } from '../trace/journal.js';
import type { TierCatalog } from '../tools/delegate-tool.js';
import type { RequestDocument } from '../types.js';

/**
 * Transforms a document before its run starts (e.g. up-front delegate resolution); `run` says which
 * run it prepares and, by `run.root`, its tree (LOOP-19).
 */
export type RunPreparer = (request: LoadedRequest, options: RunOptions, runtime: Runtime, run: RunInfo) => Promise<LoadedRequest> | LoadedRequest;

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

  /**
   * Runs a loaded Request (or a plain document) to completion. Never throws for run failures; an
   * input that does not match the declared input schema throws an InputError before anything
   * runs (DATA-11), as an invalid document throws a RequestError.
   */
  async run(request: LoadedRequest | RequestDocument, options: RunOptions = {}): Promise<RunResult> {
    const loaded = 'document' in request ? request : this.validate(request);
    // The input comes from outside the run tree: strict (DATA-11); a delegate's input is bridged by its model (DEL-9).
    checkGivenInput(loaded, options.input);
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
