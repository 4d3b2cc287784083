/** Child runs elsewhere (QUEUE-1): how a worker runs a child another process started (the child as JSON and the runner's hook are in contracts.ts). */
import { BudgetMeter } from '../budget.js';
import { JournalReplay } from '../trace/journal.js';
import type { Model } from '../model.js';
import { runRequest } from './run-loop.js';
import type { Runtime } from './runtime.js';
import type { ConfirmHook, RemoteChild, RunOptions, RunResult, StartedCallLog } from '../contracts.js';
import type { Tracer } from '../trace/trace.js';
import { TreeBounds } from './tree-bounds.js';

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
