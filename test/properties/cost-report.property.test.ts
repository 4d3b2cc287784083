/**
 * Property tests of the cost report (spec/cli.md CLI-17): for generated run trees run by the
 * runtime and written as traces, the report's total is the top run's usageTotal, and each parent's
 * subtotal is its usageTotal and the sum of its subtree's rows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costReport, reportJson, type Tally } from '../../src/cli/cost-report.js';
import { CostTree, answerModel } from '../../src/cli/cost-tree.js';
import { readTraceFile } from '../../src/cli/read-trace.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ReplayModel } from '../../src/models/replay.js';
import type { CassetteEntry } from '../../src/models/cassette.js';
import { Tracer, memorySink } from '../../src/protocol/trace.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import { TreeRuntime, shapeOf } from '../helpers/fan-out-tree.js';
import { tempDir } from '../helpers/cli.js';

/** Fixed seed so CI is deterministic; override with FC_SEED / FC_NUM_RUNS to explore. */
const fcOptions = { seed: Number(process.env.FC_SEED ?? 42), numRuns: Number(process.env.FC_NUM_RUNS ?? 40) };

/** Models an entry may name: two priced ones, one the catalog does not price, and none (a replay that costs 0, CAS-14). */
const MODELS = ['test:cheap', 'test:dear', 'test:unpriced', undefined] as const;

const catalog = new ModelCatalog(
  {
    models: {
      'test:cheap': { tier: 'fast', price: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
      'test:dear': { tier: 'deep', price: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
      'test:unpriced': { tier: 'balanced' },
    },
  },
  { warn: () => undefined },
);

/** One model answer of a node: its model, its tokens, and whether a broken answer comes first (a re-ask, LOOP-8). */
const answerArbitrary = fc.record({
  model: fc.constantFrom(...MODELS),
  usage: fc.record({
    inputTokens: fc.nat({ max: 50_000 }),
    outputTokens: fc.nat({ max: 5_000 }),
    cacheReadTokens: fc.nat({ max: 20_000 }),
    cacheWriteTokens: fc.nat({ max: 2_000 }),
  }),
  reask: fc.boolean(),
});

type Answer = typeof answerArbitrary extends fc.Arbitrary<infer T> ? T : never;

/** A tree of 1 to 7 runs (each node's parent an earlier node), each node answering in 1 to 3 steps. */
const treeArbitrary = fc.integer({ min: 1, max: 7 }).chain((size) =>
  fc.record({
    parents: fc.tuple(...Array.from({ length: size - 1 }, (_, index) => fc.nat({ max: index }))),
    steps: fc.tuple(...Array.from({ length: size }, () => fc.array(answerArbitrary, { minLength: 1, maxLength: 3 }))),
  }),
);

/**
 * The cassette of a tree: node `i` (request `n<i>`) delegates to all its children at step 0, waits
 * in the steps after, and answers at its last step; a re-asked step first gets text that is not JSON.
 */
function cassetteOf(shape: number[][], steps: Answer[][]): CassetteEntry[] {
  const entries: CassetteEntry[] = [];
  for (const [node, answers] of steps.entries()) {
    const children = shape[node] ?? [];
    for (const [step, answer] of answers.entries()) {
      const match = { request: `n${node}`, step };
      const named = answer.model === undefined ? {} : { model: answer.model };
      if (answer.reask) entries.push({ match, ...named, text: 'not JSON', usage: answer.usage });
      const last = step === answers.length - 1;
      const calls = step === 0 ? children.map((child) => ({ _tool: `c${child}` })) : [];
      entries.push({ match, ...named, solution: { calls, output: last ? `n${node} done` : null }, usage: answer.usage });
    }
  }
  return entries;
}

/** Costs summed in another order may differ in the last binary digits; unknown stays unknown. */
function expectSameCost(actual: number | null, expected: number | null): void {
  if (expected === null || actual === null) expect(actual).toBe(expected);
  else expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(expected)));
}

function expectSameUsage(
  tally: Pick<Tally, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'steps' | 'costUsd'>,
  usage: UsageSummary,
): void {
  expect([tally.inputTokens, tally.outputTokens, tally.cacheReadTokens, tally.cacheWriteTokens, tally.steps]).toEqual([
    usage.inputTokens,
    usage.outputTokens,
    usage.cacheReadTokens,
    usage.cacheWriteTokens,
    usage.steps,
  ]);
  expectSameCost(tally.costUsd, usage.costUsd);
}

/** Runs a generated tree through the runtime, writes its trace as a file, and reads the report back. */
async function runAndReport(parents: number[], steps: Answer[][]) {
  const shape = shapeOf(parents);
  const sink = memorySink();
  const model = new ReplayModel(cassetteOf(shape, steps), 'inline', { prices: catalog });
  const result = await new TreeRuntime(shape).runTree({ model, tracer: new Tracer([sink]), maxDepth: shape.length });
  const path = join(tempDir('cost-property-'), 'trace.jsonl');
  writeFileSync(path, `${sink.events.map((event) => JSON.stringify(event)).join('\n')}\n`);
  const tree = new CostTree();
  for await (const event of readTraceFile(path)) tree.apply(event);
  const report = costReport(tree, { price: (answer) => catalog.costOf(answerModel(answer), answer.usage), tierOf: (name) => catalog.tierOf(name) });
  const completed = new Map(sink.events.filter((event) => event.event === 'run.completed').map((event) => [event.run, event.usageTotal as UsageSummary]));
  return { shape, result, report, completed };
}

describe('the cost report (properties)', () => {
  it("totals the top run's usageTotal, and each parent's subtotal is its usageTotal and the sum of its subtree's rows", async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, async ({ parents, steps }) => {
        const { shape, result, report, completed } = await runAndReport(parents, steps);
        expect(result.ok).toBe(true);
        expect(report.runs).toHaveLength(shape.length);
        expect(report.unfinished).toEqual([]);
        expectSameUsage(report.total, result.usageTotal);
        expect(report.total.runs).toBe(shape.length);

        const { rows, total } = reportJson(report, 'run');
        const parentOf = new Map(rows.map((row) => [row.run as string, row.parent as string | null]));
        const inSubtree = (run: string, top: string): boolean => run === top || (parentOf.get(run) != null && inSubtree(parentOf.get(run) as string, top));
        for (const cost of report.runs) {
          // Each run's subtree is what the runtime reported as its usageTotal (DEL-17).
          expectSameUsage(cost.subtree, completed.get(cost.run.run) as UsageSummary);
          // ... and the sum of the rows beneath it, itself included.
          const mine = rows.filter((row) => inSubtree(row.run as string, cost.run.run));
          expect(mine).toHaveLength(cost.subtree.runs);
          for (const field of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'steps'] as const)
            expect(cost.subtree[field]).toBe(mine.reduce((sum, row) => sum + (row[field] as number), 0));
          const costs = mine.map((row) => row.costUsd as number | null);
          expectSameCost(cost.subtree.costUsd, costs.includes(null) ? null : (costs as number[]).reduce((sum, each) => sum + each, 0));
        }
        // Every grouping has the same total.
        for (const by of ['model', 'tier', 'parent'] as const) expect(reportJson(report, by).total).toEqual(total);
      }),
      fcOptions,
    );
  });

  it('groups every answer under the model it was priced as, and every run under one tier, losing none', async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, async ({ parents, steps }) => {
        const { report } = await runAndReport(parents, steps);
        for (const groups of [report.models, report.tiers]) {
          for (const field of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const)
            expect(groups.reduce((sum, group) => sum + group.tally[field], 0)).toBe(report.total[field]);
          const costs = groups.map((group) => group.tally.costUsd);
          expectSameCost(costs.includes(null) ? null : (costs as number[]).reduce((sum, each) => sum + each, 0), report.total.costUsd);
        }
        expect(report.tiers.reduce((sum, group) => sum + group.tally.runs, 0)).toBe(report.runs.length);
        // A model named by no entry costs nothing: the cassette's own name (CAS-14).
        const free = report.models.find((group) => group.key === 'replay:inline');
        if (free) expect(free.tally.costUsd).toBe(0);
      }),
      fcOptions,
    );
  });
});
