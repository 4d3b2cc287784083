/** The Redis keys a queue's run trees use besides BullMQ's own (QUEUE-5, QUEUE-6, QUEUE-7, QUEUE-12, QUEUE-17, QUEUE-20, QUEUE-22, QUEUE-31, QUEUE-32). */
import type { RemoteChild } from '../protocol/contracts.js';

/**
 * The name a session of a run tree goes by in Redis (QUEUE-12): its top run's id; in the nth
 * resume of a journaled tree (JOURNAL-9), that id and `~<n>`, so the keys of a resumed tree are
 * not those its killed session left behind.
 */
export function treeKey(root: string, session = 0): string {
  return session === 0 ? root : `${root}~${session}`;
}

/** The tree session a queued child belongs to (QUEUE-12). */
export function treeOf(child: Pick<RemoteChild, 'parent' | 'journal'>): string {
  return treeKey(child.parent.root, child.journal?.session);
}

/** A child's job id (QUEUE-2, QUEUE-12): its run id, and `~<n>` in the nth resume, so a resumed tree's jobs are not those its killed session left. */
export function jobIdOf(child: Pick<RemoteChild, 'id' | 'journal'>): string {
  return treeKey(child.id, child.journal?.session);
}

/** Where the claims of the tree's cassette entries are kept, `<prefix>:<entry index>` (QUEUE-17, CAS-16). */
export function cassetteClaimsKey(queueName: string, tree: string): string {
  return `delegate-run:${queueName}:cassette:${tree}`;
}

/** How long a tree's keys of its own (budget, run count, cassette claims, trace stream) outlive their last change: a day. */
export const KEPT_SECONDS = 86_400;

/** The stream a run tree's remote events go to, in order per run (QUEUE-5). */
export function traceStreamKey(queueName: string, root: string): string {
  return `delegate-run:${queueName}:trace:${root}`;
}

/** The hash holding a run tree's spending, `tokens` and `costUsd`, that all its processes share (QUEUE-6). */
export function budgetKey(queueName: string, root: string): string {
  return `delegate-run:${queueName}:budget:${root}`;
}

/** The hash counting a run tree's runs, `runs` started and `refused`, that all its processes admit against (QUEUE-20). */
export function runsKey(queueName: string, root: string): string {
  return `delegate-run:${queueName}:runs:${root}`;
}

/** The channel a cancelled run tree is announced on: every worker aborts that tree's jobs (QUEUE-7). */
export function cancelChannel(queueName: string): string {
  return `delegate-run:${queueName}:cancel`;
}

/** The key marking a run tree cancelled, so a job a worker takes up after the announcement ends at once too (QUEUE-7). */
export function cancelledKey(queueName: string, root: string): string {
  return `delegate-run:${queueName}:cancelled:${root}`;
}

/** The channel a job its caller gave up on is announced on, by its id: the worker running it aborts that one job (QUEUE-22). */
export function jobCancelChannel(queueName: string): string {
  return `delegate-run:${queueName}:cancel-job`;
}

/** The key marking one job cancelled, so a worker taking it up after the announcement ends it at once too (QUEUE-22). */
export function jobCancelledKey(queueName: string, job: string): string {
  return `delegate-run:${queueName}:cancelled-job:${job}`;
}

/** True when stream id `a` (`<ms>-<seq>`) is at or after `b`. */
export function streamIdReached(a: string, b: string): boolean {
  const [aMs, aSeq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bMs, bSeq] = b.split('-').map(BigInt) as [bigint, bigint];
  return aMs > bMs || (aMs === bMs && aSeq >= bSeq);
}

/** The key whose life says the tree's top process is alive: it refreshes it, and workers end the jobs of a tree whose key is gone (QUEUE-25). */
export function aliveKey(queueName: string, tree: string): string {
  return `delegate-run:${queueName}:alive:${tree}`;
}

/** BullMQ's hash of a job, holding its data and result (QUEUE-26). */
export function jobHashKey(queueName: string, job: string): string {
  return `bull:${queueName}:${job}`;
}

/** BullMQ's keys of the queue as a whole, which the queue mode gives a lifetime as well (QUEUE-26). */
export function queueWideKeys(queueName: string): string[] {
  const names = ['meta', 'id', 'events', 'wait', 'paused', 'active', 'completed', 'failed', 'delayed', 'prioritized', 'pc', 'marker', 'stalled', 'limiter'];
  return names.map((name) => `bull:${queueName}:${name}`);
}

/** The list of a job's non-idempotent calls, each recorded before its Activity ran (QUEUE-31), that a later attempt at the job replays as started. */
export function startedCallsKey(queueName: string, job: string): string {
  return `delegate-run:${queueName}:started-calls:${job}`;
}

/** The hash of what each attempt at a job paid for its own model answers so far, by attempt number (QUEUE-32). */
export function attemptUsageKey(queueName: string, job: string): string {
  return `delegate-run:${queueName}:attempt-usage:${job}`;
}
