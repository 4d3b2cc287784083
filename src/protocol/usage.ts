/** Token usage and cost: the records a model call reports, and the arithmetic that sums them over runs and run trees (LOOP-15). */

/** Normalised token usage of one model call or a whole run. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens?: number;
}

/** Usage of a run: tokens, cost, and what it did. */
export interface UsageSummary extends Usage {
  /** Cost in US dollars, `null` when any part of it is of unknown price. */
  costUsd: number | null;
  steps: number;
  toolCalls: number;
  ms: number;
}

/** An empty usage record. */
export function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Adds costs; unknown (`null`) stays unknown, since a total with an unpriced part is unknown. */
export function addCost(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a + b;
}

/** Adds usage records field by field. */
export function addUsage(total: Usage, more: Partial<Usage>): Usage {
  const sum: Usage = {
    inputTokens: total.inputTokens + (more.inputTokens ?? 0),
    outputTokens: total.outputTokens + (more.outputTokens ?? 0),
    cacheReadTokens: total.cacheReadTokens + (more.cacheReadTokens ?? 0),
    cacheWriteTokens: total.cacheWriteTokens + (more.cacheWriteTokens ?? 0),
  };
  if (total.reasoningTokens !== undefined || more.reasoningTokens !== undefined) {
    sum.reasoningTokens = (total.reasoningTokens ?? 0) + (more.reasoningTokens ?? 0);
  }
  return sum;
}

/** The token counts of a usage record or summary, without its cost and counts. */
export function tokensOf(usage: Usage): Usage {
  return addUsage(zeroUsage(), usage);
}
