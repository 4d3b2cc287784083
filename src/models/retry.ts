/** The retry policy of the live providers: bounded exponential backoff with jitter that honours retry-after and cancellation. */
import { ModelError, ProtocolError } from '../protocol/errors.js';
import { abortError, isAbortError, sleep } from './abort-error.js';
import { connectionFailureIn, describeConnectionCause } from './connection-failure.js';

/** How a provider retries failed HTTP requests. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** The first backoff delay in milliseconds (default 500); doubled each retry, with jitter. */
  initialDelayMs?: number;
  /** The longest wait in milliseconds, backoff or retry-after (default 30 000). */
  maxDelayMs?: number;
  /** Random source in [0, 1) for jitter (tests pin it). */
  random?: () => number;
  /** Told before each wait (for progress lines and tests). */
  onRetry?: (event: RetryEvent) => void;
}

/** One scheduled retry. */
export interface RetryEvent {
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  status?: number;
  message: string;
}

/** What a failure means for the retry policy. */
export interface FailureInfo {
  retryable: boolean;
  status?: number;
  /** The wait the server asked for (`retry-after-ms` / `retry-after`), in milliseconds. */
  retryAfterMs?: number;
  /** The provider's message; for a request that reached no server, the cause in words with its code (MODEL-12). */
  message: string;
  /** The endpoint a request that reached no server tried (MODEL-12): scheme, host, port and path. */
  endpoint?: string;
}

/** The policy's defaults. */
export const DEFAULT_RETRY: Required<Omit<RetryOptions, 'onRetry'>> = {
  maxRetries: 3,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  random: Math.random,
};

const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);
/**
 * Error classes that mean "the connection failed or timed out". Matched on the error's `name` and
 * on its class name: the OpenAI SDK (v6) does not set `name` on its errors.
 */
const RETRYABLE_ERROR_NAMES = new Set(['APIConnectionError', 'APIConnectionTimeoutError', 'TimeoutError', 'ModelTimeoutError']);
/** Error types that providers send inside an SSE stream (no HTTP status) for transient failures. */
const RETRYABLE_ERROR_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'server_error', 'timeout_error']);

/** The delay `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date) asks for. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const milliseconds = Number.parseFloat(headerValue(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headerValue(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, unknown>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? String(value[0]) : value === undefined ? undefined : String(value);
}

/** Classifies an error thrown by an SDK or by fetch: 408/409/429/5xx, resets and timeouts are retryable. */
export function describeFailure(error: unknown): FailureInfo {
  const record = (error ?? {}) as { status?: unknown; headers?: unknown; message?: unknown; error?: unknown; type?: unknown };
  const status = typeof record.status === 'number' ? record.status : undefined;
  const unreached = connectionFailureIn(error);
  const message = unreached ? `${describeConnectionCause(unreached)}.` : providerMessage(error, status);
  const retryAfter = retryAfterMs(record.headers);
  const info = (retryable: boolean): FailureInfo => ({
    retryable,
    message,
    ...(unreached && { endpoint: unreached.endpoint }),
    ...(status !== undefined && { status }),
    ...(retryAfter !== undefined && { retryAfterMs: retryAfter }),
  });
  if (status !== undefined) return info(status === 408 || status === 409 || status === 429 || status >= 500);
  const body = record.error as { type?: unknown; error?: { type?: unknown } } | undefined;
  const type = body?.error?.type ?? body?.type ?? record.type;
  if (typeof type === 'string' && RETRYABLE_ERROR_TYPES.has(type)) return info(true);
  for (let cause: unknown = error, depth = 0; cause && depth < 6; cause = (cause as { cause?: unknown }).cause, depth += 1) {
    const { name, code, message: causeMessage } = cause as { name?: unknown; code?: unknown; message?: unknown };
    if (typeof name === 'string' && RETRYABLE_ERROR_NAMES.has(name)) return info(true);
    if (typeof cause === 'object' && RETRYABLE_ERROR_NAMES.has((cause as object).constructor?.name)) return info(true);
    if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return info(true);
    // undici reports a body cut off mid-stream as TypeError("terminated"), a failed connect as "fetch failed".
    if (cause instanceof TypeError && (causeMessage === 'terminated' || causeMessage === 'fetch failed')) return info(true);
  }
  return info(false);
}

/**
 * The provider's own words: an error body's `error.message` when the SDK put the whole body in its
 * message (the Anthropic SDK shows `400 {"type":"error","error":{...}}`), else the error's message.
 */
function providerMessage(error: unknown, status: number | undefined): string {
  const record = (error ?? {}) as { apiMessage?: unknown; error?: { error?: { message?: unknown } } };
  const inner = typeof record.apiMessage === 'string' ? record.apiMessage : record.error?.error?.message;
  if (typeof inner === 'string' && inner !== '') return status === undefined ? inner : `${status} ${inner}`;
  // An SDK parsing the answer stream throws the bare SyntaxError of JSON.parse.
  if (error instanceof SyntaxError) return `The server sent data that is not JSON: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The backoff before retry number `retry` (1-based): initial × 2^(retry−1), minus up to 25% jitter, capped. */
export function backoffDelay(retry: number, options: RetryOptions = {}): number {
  const initial = options.initialDelayMs ?? DEFAULT_RETRY.initialDelayMs;
  const max = options.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
  const random = options.random ?? DEFAULT_RETRY.random;
  const base = Math.min(max, initial * 2 ** (retry - 1));
  return Math.round(base * (1 - 0.25 * random()));
}

/** Per-call settings of `withRetries`. */
export interface RetryCall extends RetryOptions {
  /** The provider's name for messages ("OpenAI", "Anthropic"). */
  provider: string;
  /** Cancels the attempt in flight (the caller passes it on) and any backoff sleep. */
  signal?: AbortSignal;
  /**
   * Asked before retrying; false stops (e.g. once calls were streamed to `onCall`, a retry could
   * deliver different ones).
   */
  canRetry?: () => boolean;
}

/**
 * Runs `attempt` until it succeeds, retrying retryable failures within the bounds. Cancellation
 * rejects with an AbortError; ProtocolErrors pass through; any other final failure becomes a
 * ModelError `model_error` carrying the provider's message.
 */
export async function withRetries<T>(attempt: (attemptNumber: number) => Promise<T>, call: RetryCall): Promise<T> {
  const maxRetries = call.maxRetries ?? DEFAULT_RETRY.maxRetries;
  for (let attemptNumber = 0; ; attemptNumber += 1) {
    try {
      return await attempt(attemptNumber);
    } catch (error) {
      if (call.signal?.aborted || isAbortError(error)) throw abortError(call.signal);
      if (error instanceof ProtocolError) throw error;
      const failure = describeFailure(error);
      const retry = attemptNumber + 1;
      if (!failure.retryable || retry > maxRetries || call.canRetry?.() === false) {
        const attempts = attemptNumber + 1;
        const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
        throw new ModelError(
          'model_error',
          `The ${call.provider} request${failure.endpoint ? ` to ${failure.endpoint}` : ''} failed${tried}: ${failure.message}`,
          {
            provider: call.provider,
            attempts,
            ...(failure.endpoint !== undefined && { endpoint: failure.endpoint }),
            ...(failure.status !== undefined && { status: failure.status }),
          },
          { cause: error },
        );
      }
      const maxDelay = call.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
      const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, maxDelay) : backoffDelay(retry, call);
      call.onRetry?.({ retry, delayMs, message: failure.message, ...(failure.status !== undefined && { status: failure.status }) });
      await sleep(delayMs, call.signal);
    }
  }
}
