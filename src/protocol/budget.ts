/** Token and cost budgets: one meter shared by a run and all its descendants. */
import { BoundError } from './errors.js';
import type { Usage } from './usage.js';

/** Limits on what a run tree may spend. */
export interface Budget {
  /** Tokens of every kind (input, output, cache read and write) across the tree. */
  tokens?: number;
  /** US dollars across the tree; answers of unknown price count as 0. */
  costUsd?: number;
}

/** Counts what a run tree has spent and says when a limit is passed. */
export class BudgetMeter {
  tokens = 0;
  costUsd = 0;

  constructor(readonly limit: Budget) {}

  /** Adds one model answer's usage. */
  add(usage: Usage, costUsd: number | null): void {
    this.tokens += usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    this.costUsd += costUsd ?? 0;
  }

  /** Throws `budget_exceeded` when a limit has been passed. */
  check(): void {
    if (this.limit.tokens !== undefined && this.tokens > this.limit.tokens) {
      throw new BoundError('budget_exceeded', `The run tree used ${this.tokens} tokens, over its budget of ${this.limit.tokens}.`, {
        budget: this.limit,
        spent: { tokens: this.tokens },
      });
    }
    if (this.limit.costUsd !== undefined && this.costUsd > this.limit.costUsd) {
      throw new BoundError('budget_exceeded', `The run tree cost $${this.costUsd.toFixed(4)}, over its budget of $${this.limit.costUsd}.`, {
        budget: this.limit,
        spent: { costUsd: this.costUsd },
      });
    }
  }
}
