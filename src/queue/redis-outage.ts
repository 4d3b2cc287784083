/** Redis connection errors of the queue mode, handled and said once per outage (QUEUE-34). */

import type { EventEmitter } from 'node:events';

/** Anything that emits ioredis's or BullMQ's `error` events: a connection, a Queue, QueueEvents, a Worker. */
export type ErrorEmitter = Pick<EventEmitter, 'on'>;

/** How long after Redis answers again an error of a connection still reconnecting belongs to the outage that ended (QUEUE-34). */
const SETTLE_MS = 5000;

/**
 * Listens to the `error` events of every connection a process of the queue opens, so none reaches
 * ioredis's "Unhandled error event" stack dump, and says an outage in one line as it begins
 * (QUEUE-34): when the process's main connection closes, or any connection fails first. The outage
 * ends when the main connection is ready again; errors of the other connections in the few seconds
 * they take to follow belong to it.
 */
export class RedisOutage {
  private down = false;
  private endedAt = Number.NEGATIVE_INFINITY;
  private closing = false;

  /**
   * @param url the Redis URL, for the line.
   * @param say writes one line (the CLI: to stderr); absent, nothing is said.
   */
  constructor(
    private readonly url: string,
    private readonly say: ((line: string) => void) | undefined,
  ) {}

  /** Handles `emitter`'s errors from now on. */
  watch<T extends ErrorEmitter>(emitter: T): T {
    emitter.on('error', (error: Error) => this.failed(error));
    return emitter;
  }

  /** Follows the main connection, whose close begins an outage and whose return ends it; `ready` is called each time it is ready again. */
  follow(connection: ErrorEmitter, ready: () => void): void {
    this.watch(connection);
    connection.on('close', () => this.began('the connection closed'));
    connection.on('ready', () => {
      if (this.down) {
        this.down = false;
        this.endedAt = Date.now();
      }
      ready();
    });
  }

  /** The process is closing its connections itself: nothing more is said. */
  close(): void {
    this.closing = true;
  }

  private failed(error: Error): void {
    // Other errors BullMQ reports (a job's lock or keys gone) are a job's, not the connection's: its caller hears of them.
    if (isConnectionError(error)) this.began(error.message || (error as { code?: string }).code || 'connection error');
  }

  private began(reason: string): void {
    if (this.closing || this.down || Date.now() - this.endedAt < SETTLE_MS) return;
    this.down = true;
    this.say?.(`Redis at ${this.url} is not answering (${reason}); reconnecting, and failing the calls that need it meanwhile.`);
  }
}

/** True for an error of the connection itself: refused, reset, timed out, closed. */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || /connect|connection is closed|stream isn't writeable|socket/i.test(error.message);
}
