/** The options shared by the live providers (OpenAI, Anthropic), with their time limits and defaults. */
import { UsageError } from '../protocol/errors.js';
import type { ModelCatalog } from './model-catalog.js';
import type { RetryOptions } from './retry.js';

/** The whole-answer timeout of one attempt when none is given (spec/models.md MODEL-2). */
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
/** The longest silence between streamed chunks when none is given (MODEL-2). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** The environment variable giving the whole-answer timeout in seconds (`--model-timeout` wins). */
export const MODEL_TIMEOUT_ENV = 'DELEGATE_MODEL_TIMEOUT';

/** Options every live provider takes. */
export interface LiveModelOptions {
  /** The model name without prefix, e.g. `gpt-4.1-mini` or `claude-sonnet-4-6`. */
  model: string;
  /** Environment the provider reads its key and base URL from (never process.env directly). */
  env?: Record<string, string | undefined>;
  /** Overrides the key from the environment. */
  apiKey?: string;
  /** Overrides the base URL from the environment. */
  baseUrl?: string;
  /** Prices answers (`costUsd`); without it `costUsd` is null. */
  registry?: Pick<ModelCatalog, 'costOf'>;
  retry?: RetryOptions;
  /** Stream the answer (default true), so calls reach `onCall` before it ends. */
  stream?: boolean;
  /** The whole-answer timeout of one attempt in milliseconds (default 120 000); a timed-out attempt is retried. */
  timeoutMs?: number;
  /** The longest silence between streamed chunks in milliseconds (default 30 000); a stalled attempt is retried. */
  idleTimeoutMs?: number;
}

/**
 * Reads a timeout given in seconds (a positive number, fractions allowed) as milliseconds; `source`
 * names where it came from (`--model-timeout`, `DELEGATE_MODEL_TIMEOUT`) in the UsageError.
 */
export function parseTimeoutSeconds(value: string, source: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  const ms = Math.round(seconds * 1000);
  if (!(ms > 0) || !Number.isSafeInteger(ms)) throw new UsageError(`${source} expects a positive number of seconds, got "${value}".`);
  return ms;
}

/** The whole-answer timeout set by DELEGATE_MODEL_TIMEOUT in `env`, in milliseconds, if any. */
export function modelTimeoutFromEnv(env: Record<string, string | undefined>): number | undefined {
  const value = env[MODEL_TIMEOUT_ENV];
  return value === undefined || value === '' ? undefined : parseTimeoutSeconds(value, MODEL_TIMEOUT_ENV);
}
