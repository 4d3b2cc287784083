/** Unit tests of src/protocol/budget.ts: one meter for a run tree's tokens and cost (LOOP-13). */
import { describe, expect, it } from 'vitest';
import { BudgetMeter } from '../../src/protocol/budget.js';
import { BoundError } from '../../src/protocol/errors.js';
import type { Usage } from '../../src/protocol/usage.js';

const usage = (inputTokens: number, outputTokens = 0, cacheReadTokens = 0, cacheWriteTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

function failureOf(meter: BudgetMeter): unknown {
  try {
    meter.check();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('BudgetMeter', () => {
  it('counts input, output, cache read and cache write tokens together', () => {
    const meter = new BudgetMeter({});
    meter.add(usage(1, 2, 3, 4), 0.5);
    meter.add({ ...usage(10), reasoningTokens: 1000 }, 0.25);
    expect(meter.tokens).toBe(20);
    expect(meter.costUsd).toBe(0.75);
  });

  it('counts an answer of unknown price as costing nothing', () => {
    const meter = new BudgetMeter({ costUsd: 1 });
    meter.add(usage(1), null);
    expect(meter.costUsd).toBe(0);
    expect(failureOf(meter)).toBeUndefined();
  });

  it('passes while the tree is at or under its limits, and without limits', () => {
    const meter = new BudgetMeter({ tokens: 10, costUsd: 1 });
    meter.add(usage(10), 1);
    expect(failureOf(meter)).toBeUndefined();
    const unlimited = new BudgetMeter({});
    unlimited.add(usage(1_000_000), 1000);
    expect(failureOf(unlimited)).toBeUndefined();
  });

  it('fails with budget_exceeded, naming the tokens used and the budget, once the token limit is passed', () => {
    const meter = new BudgetMeter({ tokens: 10 });
    meter.add(usage(6), 0);
    meter.add(usage(5), 0);
    const error = failureOf(meter);
    expect(error).toBeInstanceOf(BoundError);
    expect(error).toMatchObject({ code: 'budget_exceeded', data: { budget: { tokens: 10 }, spent: { tokens: 11 } } });
    expect((error as Error).message).toContain('11');
    expect((error as Error).message).toContain('10');
  });

  it('fails with budget_exceeded once the cost limit is passed', () => {
    const meter = new BudgetMeter({ costUsd: 0.01 });
    meter.add(usage(1), 0.02);
    expect(failureOf(meter)).toMatchObject({ code: 'budget_exceeded', data: { spent: { costUsd: 0.02 } } });
  });
});
