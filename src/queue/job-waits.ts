/** Waiting for the ends of many jobs through one listener per kind of end on the queue's events (QUEUE-10), not one per job on the queue. */
import type { Job, QueueEvents } from 'bullmq';

/** A job's end as its waiter is told: its return value, or why it failed. */
type Settle = { done(value: unknown): void; fail(error: Error): void };

/**
 * The waits of one process for its jobs (QUEUE-10). BullMQ's own `waitUntilFinished` adds a
 * listener to the queue for every job it waits on, so a 500-wide fan-out passed the emitter's
 * limit; here the queue's events carry one `completed` and one `failed` listener, whose ends are
 * handed to the waiters by job id.
 */
export class JobWaits {
  private readonly waiting = new Map<string, Set<Settle>>();

  constructor(events: QueueEvents) {
    events.on('completed', ({ jobId, returnvalue }) => this.settle(jobId, (waiter) => waiter.done(returnvalue)));
    events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, (waiter) => waiter.fail(new Error(failedReason))));
  }

  /**
   * Resolves to the job's return value once it completes, rejects with its failure, or with a
   * message saying it `timed out` after `timeoutMs`. A job that ended before the wait began is
   * found by `look` (its state read once, after the listeners are in place).
   */
  finished<T>(job: Job, timeoutMs: number, look: (job: Job) => Promise<{ value: T } | { error: Error } | undefined>): Promise<T> {
    const id = job.id as string;
    return new Promise<T>((resolve, reject) => {
      const waiter: Settle = {
        done: (value) => {
          end();
          resolve(value as T);
        },
        fail: (error) => {
          end();
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.fail(new Error(`The wait for job ${id} timed out after ${timeoutMs} ms.`)), timeoutMs);
      const end = () => {
        clearTimeout(timer);
        const set = this.waiting.get(id);
        set?.delete(waiter);
        if (set?.size === 0) this.waiting.delete(id);
      };
      let set = this.waiting.get(id);
      if (!set) {
        set = new Set();
        this.waiting.set(id, set);
      }
      set.add(waiter);
      look(job).then(
        (ended) => {
          if (ended === undefined || !set.has(waiter)) return;
          if ('value' in ended) waiter.done(ended.value);
          else waiter.fail(ended.error);
        },
        () => undefined,
      );
    });
  }

  /** Fails every wait: the queue is closing. */
  close(): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, (waiter) => waiter.fail(new Error('The queue is closing.')));
  }

  private settle(id: string, tell: (waiter: Settle) => void): void {
    const set = this.waiting.get(id);
    if (!set) return;
    for (const waiter of [...set]) tell(waiter);
  }
}
