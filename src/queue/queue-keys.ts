/** The Redis keys a queue's run trees use besides BullMQ's own (QUEUE-5, QUEUE-6, QUEUE-7, QUEUE-20, QUEUE-22). */

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
