/** The time limits of one model attempt: the whole answer, and the silence between streamed chunks (spec/models.md MODEL-2). */
import { onAbort } from '../protocol/cancellation.js';
import { abortError } from './abort-error.js';

/** The limits of one attempt, in milliseconds. */
export interface DeadlineLimits {
  /** The whole answer: from sending the request to its last byte. */
  totalMs: number;
  /** The longest silence between two streamed chunks, counted from the first chunk. */
  idleMs: number;
}

/**
 * A model attempt that ran out of time. Not a ProtocolError: the retry policy treats it like any
 * other transient failure (retry.ts recognises it by its name).
 */
export class ModelTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelTimeoutError';
  }
}

/**
 * The deadlines of one attempt. `signal` aborts when the caller's signal does or when a deadline
 * passes, so passing it to the SDK closes the connection either way; `chunk()` is called for each
 * streamed chunk. The idle deadline starts with the first chunk: until then only the whole-answer
 * deadline runs, since a model may think for a long time before it writes anything.
 */
export class AttemptDeadline {
  private readonly controller = new AbortController();
  private readonly totalTimer: ReturnType<typeof setTimeout>;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private timeout: ModelTimeoutError | undefined;
  private readonly unfollow: () => void;

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly limits: DeadlineLimits,
  ) {
    this.totalTimer = setTimeout(() => this.expire(`No complete answer within the model timeout of ${seconds(limits.totalMs)}.`), limits.totalMs);
    this.unfollow = caller ? onAbort(caller, () => this.controller.abort(abortError(caller))) : () => undefined;
  }

  /** Aborts on the caller's cancellation or on a deadline. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A streamed chunk arrived: the idle deadline starts over. */
  chunk(): void {
    if (this.controller.signal.aborted) return;
    // One timer per attempt, pushed back by each chunk (refresh() is O(1), about 70 ns): a stream of hundreds of chunks makes no new ones.
    if (this.idleTimer !== undefined) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(
      () => this.expire(`The answer stream was silent for longer than the idle timeout of ${seconds(this.limits.idleMs)}.`),
      this.limits.idleMs,
    );
  }

  /**
   * Throws what ended the attempt early: the caller's AbortError, or the ModelTimeoutError of the
   * deadline that passed. The SDKs end an aborted stream quietly, so a seemingly complete answer
   * is checked too.
   */
  check(): void {
    if (this.caller?.aborted) throw abortError(this.caller);
    if (this.timeout) throw this.timeout;
  }

  /** Stops the timers and lets go of the caller's signal. */
  dispose(): void {
    clearTimeout(this.totalTimer);
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.unfollow();
  }

  private expire(message: string): void {
    if (this.controller.signal.aborted) return;
    this.timeout = new ModelTimeoutError(message);
    this.controller.abort(this.timeout);
  }
}

/** Runs one attempt under its deadlines; a deadline that passed wins over whatever the SDK threw. */
export async function withDeadline<T>(caller: AbortSignal | undefined, limits: DeadlineLimits, attempt: (deadline: AttemptDeadline) => Promise<T>): Promise<T> {
  const deadline = new AttemptDeadline(caller, limits);
  try {
    const result = await attempt(deadline);
    deadline.check();
    return result;
  } catch (error) {
    deadline.check();
    throw error;
  } finally {
    deadline.dispose();
  }
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
