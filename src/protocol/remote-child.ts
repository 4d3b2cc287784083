/** Child runs elsewhere (QUEUE-1): what a child run needs as JSON, the hook a queue implements, and how a worker runs one. */
import { BudgetMeter, type Budget } from './budget.js';
import { JournalReplay } from './journal.js';
import type { LoadedRequest } from './load-request.js';
import type { Model, ProviderFile } from './model.js';
import { runRequest } from './run-loop.js';
import type { ConfirmHook, RunOptions, RunResult, Runtime } from './runtime.js';
import type { TraceEvent, Tracer } from './trace.js';
import { TreeBounds, type TreeLimits } from './tree-bounds.js';

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

/** The native parts a remote child carries, as JSON (QUEUE-2). */
export function filesToJson(files: readonly ProviderFile[]): NonNullable<RemoteChild['files']> {
  return files.map((file) => ({ path: file.path, mediaType: file.mediaType, base64: Buffer.from(file.data).toString('base64') }));
}

/** What a worker gives {@link runRemoteChild} besides the child: its model, the tree's meter, the signal and tracer. */
export interface RemoteChildSetting {
  model: Model | undefined;
  /** The tree's budget meter as this process sees it (QUEUE-6); default: a fresh one for the child's budget. */
  meter?: BudgetMeter;
  /** The tree's run bounds as this process sees them (QUEUE-20); default: bounds of the child's own, counted here. */
  bounds?: TreeBounds;
  signal: AbortSignal;
  tracer: Tracer;
  /** Decides the child's approvals (QUEUE-11): no one can be asked across processes, so a worker gives its own policy. */
  confirm?: ConfirmHook;
  /** The job's record of started non-idempotent calls (QUEUE-31). */
  startedCalls?: StartedCallLog;
}

/**
 * Runs a child another process started (QUEUE-3): the same run it would have been in process, with
 * the same id, parent, depth and root, options and bounds; its own children go through the
 * runtime's child runner again.
 */
export function runRemoteChild(runtime: Runtime, child: RemoteChild, setting: RemoteChildSetting): Promise<RunResult> {
  const options: RunOptions = {
    ...child.options,
    signal: setting.signal,
    tracer: setting.tracer,
    runId: child.id,
    name: child.request.name,
    trusted: child.trusted,
    ...(child.input === undefined ? {} : { input: child.input }),
    ...(setting.model ? { model: setting.model } : {}),
    ...(setting.confirm ? { confirm: setting.confirm } : {}),
  };
  const meter = setting.meter ?? (child.budget ? new BudgetMeter(child.budget) : undefined);
  const files = (child.files ?? []).map((file) => ({ path: file.path, mediaType: file.mediaType, data: Buffer.from(file.base64, 'base64') }));
  // A journaled tree's child replays its subtree's journaled answers and calls by place (QUEUE-13).
  const journal = child.journal ? { journal: new JournalReplay(child.journal.events, child.journal.session) } : {};
  // A job taken over asks before it repeats a non-idempotent call an earlier attempt started (QUEUE-31).
  const startedCalls = setting.startedCalls ? { startedCalls: setting.startedCalls } : {};
  return runRequest(runtime, child.request, options, {
    parent: child.parent,
    tree: { meter, bounds: setting.bounds ?? new TreeBounds(child.limits), ...journal, ...startedCalls },
    ...(child.worker ? { worker: true } : {}),
    ...(files.length === 0 ? {} : { files }),
  });
}
