/** Bounds on a whole run tree: how many runs it may start (DEL-19) and how many model calls it may have in flight (LOOP-16). */
import { DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_RUNS } from '../constants.js';
import { BoundError, UsageError, cancelled } from '../errors.js';
import { onAbort } from '../cancellation.js';

/** The limits of one run tree. */
export interface TreeLimits {
  /** Runs the tree may start, the top run included. */
  maxRuns: number;
  /** Model calls the tree may have in flight at once. */
  maxConcurrency: number;
}

/**
 * A counting semaphore whose waiters are served first come, first served and whose wait a signal
 * cancels. A released slot passes straight to the longest waiter, so no newcomer overtakes it.
 */
export class Slots {
  private used = 0;
  // A Set keeps insertion order (the queue) and lets a cancelled waiter leave from anywhere in it.
  private readonly waiting = new Set<() => void>();

  constructor(readonly size: number) {}

  /** Slots taken now. */
  get inUse(): number {
    return this.used;
  }

  /** Waiters queued now. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Takes a slot, waiting for one when all are taken; resolves to the function that gives it back
   * (calling it again does nothing). Rejects with `cancelled_by_user`, leaving the queue, when
   * `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(cancelled(signal.reason));
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        release();
        resolve(this.releaser());
      };
      this.waiting.add(grant);
      const release = signal
        ? onAbort(signal, () => {
            this.waiting.delete(grant);
            reject(cancelled(signal.reason));
          })
        : () => undefined;
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.values().next();
      if (next.done) {
        this.used--;
        return;
      }
      // The slot stays taken: it changes hands.
      this.waiting.delete(next.value);
      next.value();
    };
  }
}

/**
 * The bounds one run tree shares: the top run creates them (counting itself as the first run),
 * the options carry them to every descendant, and the Delegation Activity admits each child run.
 */
export class TreeBounds {
  /** Runs started so far, the top run included. */
  runs = 1;
  /** Delegations refused because the tree had started `maxRuns` runs. */
  refused = 0;
  readonly slots: Slots;

  constructor(readonly limits: TreeLimits) {
    this.slots = new Slots(limits.maxConcurrency);
  }

  /**
   * Admits one more run, or throws `budget_exceeded` when the tree has already started `maxRuns`
   * runs; a refusal marks the tree as over its bound (see `check`).
   */
  admitRun(what: string): void {
    if (this.runs >= this.limits.maxRuns) {
      this.refused++;
      throw this.refusal(what);
    }
    this.runs++;
  }

  /**
   * Admits one more run as {@link admitRun} does. Bounds a tree shares across processes count in
   * one place every process asks (QUEUE-20), so theirs answers with a promise; these answer at once
   * and return nothing, which keeps an in-process tree's admissions synchronous.
   */
  admit(what: string): Promise<void> | undefined {
    this.admitRun(what);
    return undefined;
  }

  /** The `budget_exceeded` error a delegation refused a run fails with, naming the run it would have been. */
  protected refusal(what: string): BoundError {
    return this.exceeded(`${what} would start run ${this.runs + 1} of the run tree, past its limit of ${runs(this.limits.maxRuns)} (maxRuns, --max-runs).`);
  }

  /**
   * Throws `budget_exceeded` once a delegation has been refused: like a spent budget (LOOP-13),
   * a tree past its run bound stops every run at its next model call.
   */
  check(): void {
    if (this.refused > 0 || this.runs > this.limits.maxRuns) {
      throw this.exceeded(`The run tree reached its limit of ${runs(this.limits.maxRuns)} (maxRuns, --max-runs) and was refused another.`);
    }
  }

  /** Waits for a model-call slot (see `Slots.acquire`). */
  acquireModelSlot(signal: AbortSignal): Promise<() => void> {
    return this.slots.acquire(signal);
  }

  private exceeded(message: string): BoundError {
    return new BoundError('budget_exceeded', message, { maxRuns: this.limits.maxRuns, runs: this.runs });
  }
}

function runs(count: number): string {
  return count === 1 ? '1 run' : `${count} runs`;
}

/**
 * The limits of a tree whose top run was given `maxRuns` and `maxConcurrency` (each defaulted);
 * throws `usage_error` for a value that is not a whole number ≥ 1, since a tree with no model-call
 * slot could never make progress.
 */
export function treeLimits(options: { maxRuns?: number | undefined; maxConcurrency?: number | undefined }): TreeLimits {
  const limits = { maxRuns: options.maxRuns ?? DEFAULT_MAX_RUNS, maxConcurrency: options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`The run option ${name} must be a whole number of at least 1, got ${value}.`);
  }
  return limits;
}
