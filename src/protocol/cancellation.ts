/** Cancelling runs: the run signal, the one `cancelled_by_user` error, and waiting on work no longer than a signal allows. */
import { setMaxListeners } from 'node:events';
import { cancelled } from './errors.js';

/** The followers of each signal that has any, called by the one listener the signal carries for them. */
const followers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `listener` once when `signal` aborts (at once when it already has); returns the function
 * that stops following. A run's signal is followed by every child run, call and wait below it at
 * once — a fan-out of a thousand — and an EventTarget removes a listener by walking all of them,
 * which made a fan-out's bookkeeping grow with the square of its width. So a signal carries one
 * listener, and its followers are a set: adding and releasing one costs the same at any width.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  let set = followers.get(signal);
  if (!set) {
    const own = new Set<() => void>();
    set = own;
    followers.set(signal, own);
    signal.addEventListener(
      'abort',
      () => {
        followers.delete(signal);
        for (const follower of own) follower();
      },
      { once: true },
    );
  }
  const entry = () => {
    set.delete(entry);
    listener();
  };
  set.add(entry);
  return () => {
    set.delete(entry);
  };
}

/**
 * The signal of one run: aborts when `parent` does. The runtime follows it through `onAbort`; the
 * parent carries it as one follower, released by `release()` when the run ends.
 */
export function runSignal(parent: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (!parent) return { signal: controller.signal, release: () => undefined };
  const release = onAbort(parent, () => controller.abort(parent.reason));
  return { signal: controller.signal, release };
}

/** The signals handed to code outside the runtime so far. */
const handedOut = new WeakSet<AbortSignal>();

/**
 * A run's signal as Activities and approval hooks receive it: code outside the runtime listens to
 * it directly, every running call at once (a resolver's `AbortSignal.any`, an SDK's request), so it
 * takes any number of listeners without the leak warning. Done when a signal is first handed out,
 * not for every run: raising the limit costs as much as making the signal, and most runs of a
 * fan-out hand theirs to no one.
 */
export function handedOutSignal(signal: AbortSignal): AbortSignal {
  if (!handedOut.has(signal)) {
    handedOut.add(signal);
    setMaxListeners(0, signal);
  }
  return signal;
}

/** Throws `cancelled_by_user` when the signal has aborted. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw cancelled();
}

/**
 * Settles like `work`, or rejects as soon as `signal` aborts, with `reason()` (by default the
 * signal's own reason). The work itself goes on; its later failure is handled, never unhandled.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, reason: () => unknown = () => signal?.reason): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const release = onAbort(signal, () => reject(reason()));
    work.then(
      (value) => {
        release();
        resolve(value);
      },
      (error: unknown) => {
        release();
        reject(error);
      },
    );
  });
}
