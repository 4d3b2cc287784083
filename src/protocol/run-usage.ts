/** The usage of one run as it goes: its own model calls, its descendants' totals, its steps and calls (LOOP-15). */
import type { Usage } from './types.js';
import { addCost, addUsage, type UsageSummary, zeroUsage } from './usage.js';

/** Counts what one run used; `usage()` is the run's own, `usageTotal()` adds its descendants'. */
export class RunUsage {
  private own: Usage = zeroUsage();
  private ownCost: number | null = 0;
  private descendants: Usage = zeroUsage();
  private descendantCost: number | null = 0;
  private readonly started = Date.now();
  /** Model steps taken so far. */
  steps = 0;
  /** Calls executed so far (shared with the calls' scope, which counts them). */
  readonly counters = { toolCalls: 0 };

  /** Adds one of the run's own model answers. */
  addOwn(usage: Usage, costUsd: number | null): void {
    this.own = addUsage(this.own, usage);
    this.ownCost = addCost(this.ownCost, costUsd);
  }

  /** Adds a descendant run's total (DEL-17). */
  addDescendant(usage: UsageSummary): void {
    this.descendants = addUsage(this.descendants, usage);
    this.descendantCost = addCost(this.descendantCost, usage.costUsd);
  }

  /** The run's own usage so far. */
  usage(): UsageSummary {
    return this.summary(this.own, this.ownCost);
  }

  /** The run's usage with its descendants' so far. */
  usageTotal(): UsageSummary {
    return this.summary(addUsage(this.own, this.descendants), addCost(this.ownCost, this.descendantCost));
  }

  private summary(usage: Usage, costUsd: number | null): UsageSummary {
    return { ...usage, costUsd, steps: this.steps, toolCalls: this.counters.toolCalls, ms: Date.now() - this.started };
  }
}
