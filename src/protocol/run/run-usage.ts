/** The usage of one run as it goes: its own model calls, its descendants' totals, its steps and calls (LOOP-15). */
import type { Usage } from '../usage.js';
import { addCost, addUsage, type UsageSummary, zeroUsage } from '../usage.js';

/** Counts what one run used; `usage()` is the run's own, `usageTotal()` adds its descendants'. */
export class RunUsage {
  private own: Usage = zeroUsage();
  private ownCost: number | null = 0;
  private descendants: Usage = zeroUsage();
  private descendantCost: number | null = 0;
  private descendantSteps = 0;
  private descendantToolCalls = 0;
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

  /** Adds a descendant run's total: its tokens, cost, steps and tool calls (DEL-17). */
  addDescendant(usage: UsageSummary): void {
    this.descendants = addUsage(this.descendants, usage);
    this.descendantCost = addCost(this.descendantCost, usage.costUsd);
    this.descendantSteps += usage.steps;
    this.descendantToolCalls += usage.toolCalls;
  }

  /** The run's own usage so far. */
  usage(): UsageSummary {
    return this.summary(this.own, this.ownCost, this.steps, this.counters.toolCalls);
  }

  /** The run's usage with its descendants' so far: tokens, cost, steps and tool calls of the whole subtree; `ms` stays the run's own wall time. */
  usageTotal(): UsageSummary {
    return this.summary(
      addUsage(this.own, this.descendants),
      addCost(this.ownCost, this.descendantCost),
      this.steps + this.descendantSteps,
      this.counters.toolCalls + this.descendantToolCalls,
    );
  }

  private summary(usage: Usage, costUsd: number | null, steps: number, toolCalls: number): UsageSummary {
    // Field by field: a literal that starts with a spread and then adds properties is slow on Node 20.
    return {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
      costUsd,
      steps,
      toolCalls,
      ms: Date.now() - this.started,
    };
  }
}
