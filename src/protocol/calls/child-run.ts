/**
 * Child runs: the one way an Activity starts a run linked to its caller. The core, not the
 * Activity, decides the child's depth (DEL-14), admits it to the tree's run bound (DEL-19), hands it
 * the tree's budget meter (LOOP-13) and bounds, and chooses which of the caller's options it
 * inherits (DEL-20).
 */
import type { ProviderFile } from '../model.js';
import { DEFAULT_MAX_DEPTH } from '../constants.js';
import { BoundError } from '../errors.js';
import type { CallScope } from './call-scope.js';
import { createHash } from 'node:crypto';
import { childTurn } from './child-turns.js';
import type { ChildRunRequest, RemoteChild, RunInfo, RunOptions, RunResult } from '../contracts.js';

/**
 * The caller's options a child inherits (DEL-20): an allow-list, so an option added later is not
 * passed on by accident. `maxSteps` is inherited only when the child's document sets none.
 */
const INHERITED_OPTIONS = ['tracer', 'confirm', 'maxDepth', 'resolve'] as const satisfies readonly (keyof RunOptions)[];

/** Throws the bound's error when a child of this run could not start now: too deep, or the tree past a bound. */
export function checkChild(scope: CallScope, description: string): void {
  const maxDepth = scope.options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const depth = scope.run.depth + 1;
  if (depth > maxDepth) {
    throw new BoundError('max_depth_exceeded', `${description} would start a run at depth ${depth}, deeper than the maximum of ${maxDepth}.`, { maxDepth });
  }
  scope.tree.bounds.check();
}

/** Where a child hangs in its tree: the call that starts it and the instance that call runs on. */
export interface ChildPlace {
  callId: string;
  instance: string | undefined;
}

/**
 * A child run's id, derived from its place in the tree (JOURNAL-6): its parent's id, the call that
 * starts it, that call's instance, and how many children that call (by id and instance) started
 * in the parent before it. A tree run again in the same order gets the same ids, so a resumed tree
 * lines its runs up with the journal's. Shaped like every run id: `run_` and 12 hex digits.
 */
export function childRunId(parent: string, place: ChildPlace, ordinal: number): string {
  const digest = createHash('sha256')
    .update(`${parent}\u0000${place.callId}\u0000${place.instance ?? ''}\u0000${ordinal}`)
    .digest('hex');
  return `run_${digest.slice(0, 12)}`;
}

/** The next ordinal of a child started by the call at `place` in the run of `scope` (JOURNAL-6). */
export function nextChildOrdinal(scope: CallScope, place: ChildPlace, count = 1): number {
  const key = `${place.callId}\u0000${place.instance ?? ''}`;
  scope.children ??= new Map();
  const ordinal = scope.children.get(key) ?? 0;
  scope.children.set(key, ordinal + count);
  return ordinal;
}

/** Starts a child of the run in `scope` for the call at `place`, and rolls its usage up (DEL-17). */
export async function runChild(scope: CallScope, place: ChildPlace, child: ChildRunRequest): Promise<RunResult> {
  const callId = place.callId;
  checkChild(scope, child.description);
  // Admitted last, just before the child starts, so the tree counts exactly the runs that started (DEL-19).
  const admission = scope.tree.bounds.admit(child.description);
  if (admission) await admission;
  const id = childRunId(scope.run.id, place, nextChildOrdinal(scope, place));
  // Children started together start one per turn of the event loop (DEL-30).
  await childTurn();
  child.onStart?.(id);
  const options = inheritedOptions(scope.options, child.request.document.config?.maxSteps);
  options.signal = scope.signal;
  options.runId = id;
  options.name = child.request.name;
  options.trusted = child.trusted;
  if (child.input !== undefined) options.input = child.input;
  const model = child.model ?? scope.run.model;
  if (model) options.model = model;
  const parent = { run: scope.run.id, depth: scope.run.depth, callId, root: scope.run.root ?? scope.run.id, lineage: [...lineageOf(scope.run), scope.run.id] };
  const remote = scope.runtime.childRunner;
  // A child queued for another process is an effect: its delegate.started is on the disk first (JOURNAL-2).
  // A child run here needs no wait of its own: each of its effects waits for its events.
  const durable = remote ? scope.tree.whenDurable?.() : undefined;
  if (durable) await durable;
  const result = remote
    ? await remote.run(remoteChild(scope, id, parent, child, options), { signal: scope.signal, tracer: scope.options.tracer })
    : await scope.startRun(child.request, options, {
        parent,
        tree: scope.tree,
        ...(child.worker ? { worker: true } : {}),
        ...(child.files === undefined || child.files.length === 0 ? {} : { files: child.files }),
      });
  scope.addDescendantUsage(result.usageTotal);
  return result;
}

/** The child as JSON for a remote runner (QUEUE-2): the same run options, bounds and budget it would get in process. */
function remoteChild(scope: CallScope, id: string, parent: RemoteChild['parent'], child: ChildRunRequest, options: RunOptions): RemoteChild {
  const model = options.model;
  const standsFor = model?.standsFor;
  const budget = scope.tree.meter?.limit;
  const journal = scope.tree.journal;
  return {
    id,
    parent,
    request: child.request,
    ...(child.input === undefined ? {} : { input: child.input }),
    model: model?.id ?? null,
    ...(standsFor === undefined ? {} : { standsFor }),
    trusted: child.trusted,
    ...(child.scoped === undefined ? {} : { scoped: child.scoped }),
    ...(child.worker ? { worker: true } : {}),
    ...(child.files === undefined || child.files.length === 0 ? {} : { files: filesToJson(child.files) }),
    options: {
      ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    },
    ...(budget === undefined ? {} : { budget }),
    limits: { ...scope.tree.bounds.limits },
    // The session, and what the journal holds of this child's subtree, which it replays by place (QUEUE-12, QUEUE-13).
    ...(journal ? { journal: { session: journal.session, events: journal.subtree(id) } } : {}),
  };
}

/** The native parts a remote child carries, as JSON (QUEUE-2). */
export function filesToJson(files: readonly ProviderFile[]): NonNullable<RemoteChild['files']> {
  return files.map((file) => ({ path: file.path, mediaType: file.mediaType, base64: Buffer.from(file.data).toString('base64') }));
}

/** The options a child inherits (DEL-20), in a new object the caller completes. */
function inheritedOptions(options: RunOptions, childMaxSteps: number | undefined): RunOptions {
  const inherited: Record<string, unknown> = {};
  for (const name of INHERITED_OPTIONS) if (options[name] !== undefined) inherited[name] = options[name];
  if (childMaxSteps === undefined && options.maxSteps !== undefined) inherited.maxSteps = options.maxSteps;
  return inherited as RunOptions;
}

/** The ids of the runs above `run`, the top run first (CALL-11): its recorded lineage, else its parent alone. */
export function lineageOf(run: RunInfo): readonly string[] {
  return run.lineage ?? (run.parent === null ? [] : [run.parent]);
}
