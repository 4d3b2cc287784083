/**
 * Property tests of the cost report (spec/cli.md CLI-17): for generated run trees run by the
 * runtime and written as traces, the report's total is the top run's usageTotal, and each parent's
 * subtotal is its usageTotal and the sum of its subtree's rows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_COST_DECIMALS, costReport, reportJson, type Tally } from '../../src/cli/report/cost-report.js';
import { CostTree, answerModel } from '../../src/cli/report/cost-tree.js';
import { readTraceFile } from '../../src/cli/report/read-trace.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import { TreeRuntime, shapeOf } from '../helpers/fan-out-tree.js';
import { type Answer, cassetteOf, pricedCatalog, treeArbitrary } from '../helpers/tree-cassette.js';
import { tempDir } from '../helpers/cli.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(40);

const catalog = pricedCatalog;

/**
 * Costs summed in another order may differ in the last binary digits, and a sum of `rounded` JSON
 * amounts (CLI-28) by half a unit of their last decimal each; unknown stays unknown.
 */
function expectSameCost(actual: number | null, expected: number | null, rounded = 0): void {
  if (expected === null || actual === null) expect(actual).toBe(expected);
  else expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(expected)) + rounded * 0.5 * 10 ** -JSON_COST_DECIMALS);
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
          expectSameCost(cost.subtree.costUsd, costs.includes(null) ? null : (costs as number[]).reduce((sum, each) => sum + each, 0), costs.length);
        }
        // Every grouping has the same total.
        for (const by of ['model', 'tier', 'parent'] as const) expect(reportJson(report, by).total).toEqual(total);
      }),
      settings,
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
      settings,
    );
  });

  it('counts the distinct steps of a run once each, in whatever order its answers come (LOOP-8)', () => {
    const answer = fc.record({ step: fc.nat(6), model: fc.constantFrom('test:cheap', 'test:dear'), inputTokens: fc.nat(50) });
    fc.assert(
      fc.property(fc.array(answer, { maxLength: 12 }), (answers) => {
        const tree = new CostTree();
        const common = { ts: '2026-01-01T00:00:00.000Z', run: 'run_top', parent: null, depth: 0 };
        const started = { ...common, event: 'run.started', request: 'top.json', name: 'top', model: 'test:cheap', input: null };
        tree.apply(started);
        for (const { step, model, inputTokens } of answers) {
          const usage = { inputTokens, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
          const response = { ...common, event: 'model.response', step, solution: {}, model, usage, costUsd: 0.5, ms: 1 };
          tree.apply(response);
        }
        const report = costReport(tree, { price: (one) => one.costUsd });
        const [top] = report.runs;
        expect(top?.own.steps).toBe(new Set(answers.map((one) => one.step)).size);
        expect(top?.own.inputTokens).toBe(answers.reduce((sum, one) => sum + one.inputTokens, 0));
        // Split by model, the same answers: every token and step of each model's share, none twice.
        for (const model of ['test:cheap', 'test:dear']) {
          const mine = answers.filter((one) => one.model === model);
          const group = report.models.find((one) => one.key === model);
          if (mine.length === 0) expect(group).toBeUndefined();
          else {
            expect(group?.tally.steps).toBe(new Set(mine.map((one) => one.step)).size);
            expect(group?.tally.inputTokens).toBe(mine.reduce((sum, one) => sum + one.inputTokens, 0));
            expect(group?.tally.costUsd).toBe(mine.length * 0.5);
          }
        }
      }),
      settings,
    );
  });
});
