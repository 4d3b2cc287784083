/** What a call sees of its run, as types only: the scope every call of a step is executed in. */
import type { ActivityRegistry } from './activity-registry.js';
import type { CallLedger } from './call-ledger.js';
import type { PendingActivities } from './pending-activities.js';
import type { ContextStore } from '../context/context-store.js';
import type { RemoteChildRunner, RunInfo, RunOptions, RunStarter, TreeShares } from '../contracts.js';
import type { ProtocolError } from '../errors.js';
import type { HandlerRegistry } from '../messages/handlers.js';
import type { SolutionSchemaCache } from '../run/solution-schema-cache.js';
import type { RunTrace } from '../trace/trace.js';
import type { ErrorMessage, ToolSchema } from '../types.js';
import type { UsageSummary } from '../usage.js';

/**
 * What a call and its step use of the Runtime: the message handlers, the Activities, the shared
 * Solution schemas (MSG-26) and where child runs go (QUEUE-1). The Runtime is one.
 */
export interface RuntimeRegistries {
  readonly handlers: HandlerRegistry;
  readonly activities: ActivityRegistry;
  readonly solutionSchemas: SolutionSchemaCache;
  readonly childRunner: RemoteChildRunner | undefined;
  /** How long one call's Activity may run (TOOL-24), when bounded. */
  readonly activityTimeoutMs: number | undefined;
  /** The Activities the runtime's runs are waiting for (ERR-8). */
  readonly pendingActivities: PendingActivities;
  /** True when an Activity of this name is registered. */
  hasActivity(name: string): boolean;
}

/** Everything a call needs from its run. */
export interface CallScope {
  /** What calls use of the Runtime: its registries, not the Runtime itself. */
  runtime: RuntimeRegistries;
  store: ContextStore;
  trace: RunTrace;
  run: RunInfo;
  options: RunOptions;
  /** What the run's tree shares: budget meter and bounds. */
  tree: TreeShares;
  /** Starts a child run in the tree (DEL-14): the loop's own entry, handed down so that calls do not import the loop. */
  startRun: RunStarter;
  signal: AbortSignal;
  /** Errors of this step, appended to the context when the step ends. */
  errors: ErrorMessage[];
  /** The tools of the live context (last definition wins). */
  tools(): Map<string, ToolSchema>;
  /** Counts executed calls. */
  counters: { toolCalls: number };
  /** Which calls are done or failed, so a done call never runs again (PLAN-10). */
  ledger: CallLedger;
  addDescendantUsage(usage: UsageSummary): void;
  /** The error an Activity ended the run with (LOOP-18): the run fails with it once the step's calls have settled. */
  ended?: ProtocolError;
  /** How many children each call (by id and instance) started so far: their ids derive from it (JOURNAL-6). Created on first use. */
  children?: Map<string, number>;
}
