/** A cancelled model call as the platform says it: DOMException `AbortError` values, and sleeps that end with one (the core maps the name to `cancelled_by_user`). */

/**
 * The error a cancelled model call rejects with: the signal's own reason when it is already an
 * `AbortError`, else a `DOMException` named `AbortError` (the core maps that name to
 * `cancelled_by_user`).
 */
export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The model call was cancelled.', 'AbortError');
}

/** True for errors that mean "cancelled": AbortErrors and the SDKs' user-abort errors. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'APIUserAbortError');
}

/** Throws the AbortError of `signal` when it is already aborted. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal);
}

/** Waits `ms` milliseconds; rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
