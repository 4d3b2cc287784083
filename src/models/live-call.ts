/** One call of a live provider: attempts under their deadlines, retried by our policy, every retry told to the caller. */
import { BoundError } from '../protocol/errors.js';
import { withDeadline, type AttemptDeadline, type DeadlineLimits } from './deadline.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MODEL_TIMEOUT_MS, type LiveModelOptions } from './live-model-options.js';
import type { ModelRequest } from '../protocol/model.js';
import type { Call } from '../protocol/types.js';
import { withRetries } from './retry.js';

/** The deadlines of each attempt of a live provider (spec/models.md MODEL-2). */
export function deadlineLimits(options: LiveModelOptions): DeadlineLimits {
  return { totalMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS, idleMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS };
}

/**
 * The timeout to give an SDK. Its own timeout only covers the wait for the response headers; ours
 * covers the whole answer and fires first (a second later the SDK's would), so the error names
 * the limit that was passed. Either is retried.
 */
export function sdkTimeoutMs(options: LiveModelOptions): number {
  return deadlineLimits(options).totalMs + 1_000;
}

/**
 * Runs `attempt` under the deadlines of `options`, retrying transient failures (timeouts
 * included) by the retry policy (MODEL-3) until a call of the answer has been delivered to
 * `onCall` — a second answer could deliver different calls. The attempt gets the request with
 * that delivery counted. Each retry is told to the options' `retry.onRetry` and to the request's
 * `onRetry` (traced as `model.retry`).
 */
export function callWithRetries<T>(
  provider: string,
  request: ModelRequest,
  options: LiveModelOptions,
  attempt: (deadline: AttemptDeadline, request: ModelRequest) => Promise<T>,
): Promise<T> {
  const limits = deadlineLimits(options);
  let delivered = 0;
  const onCall = request.onCall;
  const counted: ModelRequest = onCall
    ? Object.assign({}, request, {
        onCall: (call: Call, index: number) => {
          delivered += 1;
          onCall(call, index);
        },
      })
    : request;
  return withRetries(() => withDeadline(request.signal, limits, (deadline) => attempt(deadline, counted)), {
    provider,
    ...options.retry,
    ...(request.signal ? { signal: request.signal } : {}),
    canRetry: () => delivered === 0,
    onRetry: (event) => {
      options.retry?.onRetry?.(event);
      request.onRetry?.({ attempt: event.retry, reason: event.message, waitMs: event.delayMs });
    },
  });
}

/**
 * The error of an answer the provider cut at its length limit (MODEL-4): `max_tokens_exceeded`,
 * naming the limit — `maxTokens` when one was sent (`origin` says where it came from), else the
 * provider's own default — and carrying the `partial` answer that arrived. Asking again would be
 * cut the same way, so it is not re-asked.
 */
export function answerCut(model: string, maxTokens: number | undefined, origin = 'config.maxTokens', partial?: string): BoundError {
  const limit =
    maxTokens === undefined ? "the provider's default length limit (no maxTokens was set)" : `its length limit of ${maxTokens} output tokens (${origin})`;
  return new BoundError(
    'max_tokens_exceeded',
    `The answer of ${model} was cut at ${limit} before it was complete. Raise config.maxTokens, or ask for a shorter answer.`,
    // The part that arrived, when there was one: a worker's truncated output (DEL-26).
    { model, maxTokens: maxTokens ?? null, ...(partial ? { partial } : {}) },
  );
}
