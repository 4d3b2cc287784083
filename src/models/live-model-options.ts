/** The options shared by the live providers (OpenAI, Anthropic). */
import type { ModelRegistry } from './registry.js';
import type { RetryOptions } from './retry.js';

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
  registry?: Pick<ModelRegistry, 'costOf'>;
  retry?: RetryOptions;
  /** Stream the answer (default true), so calls reach `onCall` before it ends. */
  stream?: boolean;
  /** Per-attempt timeout in milliseconds (default 10 minutes). */
  timeoutMs?: number;
}
