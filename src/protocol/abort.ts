/** Cancellation: the one `cancelled_by_user` error, and waiting on work no longer than a signal allows. */
import { cancelled } from './errors.js';

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
