/** Cancelling runs: the run signal, the one `cancelled_by_user` error, and waiting on work no longer than a signal allows. */
import { setMaxListeners } from 'node:events';
import { cancelled } from './errors.js';

/**
 * The signal of one run: aborts when `parent` does. Every running call, approval prompt and child
 * run listens to it at once, so it takes any number of listeners without the leak warning, and
 * the parent carries a single listener, removed by `release()` when the run ends.
 */
export function runSignal(parent: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  if (!parent) return { signal: controller.signal, release: () => undefined };
  const follow = () => controller.abort(parent.reason);
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', follow) };
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
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
