/** Job locks renewed off the worker's event loop (QUEUE-30): a thread of the worker process renews each lock while its job runs. */
import { Worker } from 'node:worker_threads';
import type { LockKeeperMessage } from './lock-keeper-thread.js';

/**
 * Keeps the locks of the jobs a worker runs (QUEUE-30). BullMQ renews a lock from the worker's own
 * event loop, so an Activity that blocks it (a busy loop, a synchronous library call) let the lock
 * lapse and another worker take the job while this one still ran it; this thread renews them
 * whatever the event loop does, and dies with the process, so a killed worker's jobs still move on.
 */
export class LockKeeper {
  private readonly thread: Worker;
  /** The messages of this turn of the event loop, sent to the thread together after it: one message per turn, not two per job. */
  private pending: LockKeeperMessage[] = [];

  /** Starts the thread for the Redis at `url`, renewing each lock to `lockMs` about three times per `lockMs`. */
  constructor(url: string, lockMs: number) {
    this.thread = new Worker(new URL('../queue/lock-keeper-thread.js', import.meta.url), { workerData: { url, lockMs } });
    // The thread never holds the process open: the worker's own connections do.
    this.thread.unref();
  }

  /** Renews the lock `key` while it holds `token`, until {@link drop}. */
  hold(key: string, token: string): void {
    this.send({ hold: key, token });
  }

  /** Stops renewing the lock `key`. */
  drop(key: string): void {
    this.send({ drop: key });
  }

  private send(message: LockKeeperMessage): void {
    if (this.pending.length === 0) {
      queueMicrotask(() => {
        const messages = this.pending;
        this.pending = [];
        this.thread.postMessage(messages);
      });
    }
    this.pending.push(message);
  }

  /** Stops the thread. */
  async close(): Promise<void> {
    await this.thread.terminate();
  }
}
