/** Lookups shared by the requests of one turn of the event loop: each key looked up once per turn, after the turn (SERVE-12). */

interface Waiting<Argument, Result> {
  argument: Argument;
  promise: Promise<Result>;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Wraps `run`, which looks up several arguments at once and gives one promise per argument, so that
 * every call made during one turn of the event loop shares one lookup per key (`keyOf`), and the
 * lookups of the turn are handed to `run` together right after it (`setImmediate`). No lookup
 * starts before the calls it answers were made, so what it finds is never older than the request
 * that asked; under load, the many requests that one turn answers cost one lookup per document.
 * A failed lookup fails the calls of its key only.
 */
export function coalescePerTurn<Argument, Result>(
  keyOf: (argument: Argument) => string,
  run: (batch: Argument[]) => Promise<Result>[],
): (argument: Argument) => Promise<Result> {
  let pending: Map<string, Waiting<Argument, Result>> | undefined;
  const flush = (): void => {
    const waiting = [...(pending as Map<string, Waiting<Argument, Result>>).values()];
    pending = undefined;
    let results: Promise<Result>[];
    try {
      results = run(waiting.map((entry) => entry.argument));
    } catch (error) {
      for (const entry of waiting) entry.reject(error);
      return;
    }
    waiting.forEach((entry, index) => {
      (results[index] as Promise<Result>).then(entry.resolve, entry.reject);
    });
  };
  return (argument) => {
    if (pending === undefined) {
      pending = new Map();
      setImmediate(flush);
    }
    const key = keyOf(argument);
    let entry = pending.get(key);
    if (entry === undefined) {
      let resolve!: (result: Result) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<Result>((resolvePromise, rejectPromise) => {
        resolve = resolvePromise;
        reject = rejectPromise;
      });
      entry = { argument, promise, resolve, reject };
      pending.set(key, entry);
    }
    return entry.promise;
  };
}
