/**
 * One set of numbers (spec/journal.md JOURNAL-12, spec/cli.md CLI-4, CLI-6, CLI-17, CLI-28): for
 * generated run trees, journaled, cut at any event and resumed (or not cut at all), the end-of-run
 * summary, `--json`'s usage, `delegate-run report` and the viewer's data agree on runs, steps,
 * tokens and cost.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costReport, jsonUsage, reportJson } from '../../src/cli/report/cost-report.js';
import { CostTree, answerModel } from '../../src/cli/report/cost-tree.js';
import { TreeCosts } from '../../src/cli/report/tree-costs.js';
import { summarize } from '../../src/cli/progress/summary.js';
import { TraceView } from '../../src/cli/trace-view.js';
import { createDelegateActivity } from '../../src/activities/delegate.js';
import { ReplayModel } from '../../src/models/replay.js';
import { DELEGATE_ACTIVITY } from '../../src/protocol/constants.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { nodeDocument, shapeOf, treeResolver } from '../helpers/fan-out-tree.js';
import { memoryJournal } from '../helpers/journal-tree.js';
import { cassetteOf, pricedCatalog, treeArbitrary } from '../helpers/tree-cassette.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(40);

const catalog = pricedCatalog;

/** A runtime whose node `i` delegates to its children in `shape`, with journals kept in memory. */
function treeRuntime(shape: number[][]): Runtime {
  const runtime = new Runtime();
  runtime.registerActivity(DELEGATE_ACTIVITY, createDelegateActivity({ resolvers: treeResolver(shape) }));
  return runtime;
}

/** Costs summed in another order differ in the last binary digits; rounded as JSON rounds them they are one amount. */
function sameCost(a: number | null, b: number | null): boolean {
  return a === null || b === null ? a === b : Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
}

describe('the figures of a run tree, resumed or not (properties)', () => {
  it('the summary, --json, the report and the viewer data agree on runs, steps, tokens and cost', async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }), async ({ parents, steps }, cutAt) => {
        const shape = shapeOf(parents);
        const cassette = cassetteOf(shape, steps);
        const loaded = { document: nodeDocument(0, shape), location: 'node:0', name: 'n0' };
        const first = memoryJournal();
        const options = { maxDepth: shape.length, maxSteps: 8 };
        const uncut = await treeRuntime(shape).run(loaded, { ...options, model: new ReplayModel(cassette, 'inline', { prices: catalog }), journal: first });
        // Not cut: the first run's own figures. Cut after any event past the first: the resumed session's, over the whole journal.
        let before: TraceEvent[] = [];
        let session = first.appended;
        let result = uncut;
        if (cutAt !== undefined) {
          before = first.appended.slice(0, Math.max(2, Math.round(cutAt * first.appended.length)));
          const journal = memoryJournal(before);
          const runtime = treeRuntime(shape);
          result = await runtime.resume(journal, { ...options, model: new ReplayModel(cassette, 'inline', { prices: catalog }), request: loaded });
          session = journal.appended;
        }
        const journal = [...before, ...session];

        // The summary, as the CLI builds it: the journal's earlier events, then the session's.
        const costs = new TreeCosts(before);
        for (const event of session) costs.add(event);
        const summary = summarize(result, costs.report());
        const json = jsonUsage(result.usageTotal, costs.report().total.runs);
        // The report and the viewer, from the whole journal.
        const tree = new CostTree();
        const view = new TraceView({ tierOf: (model) => catalog.tierOf(model) });
        for (const event of journal) {
          tree.apply(event);
          view.apply(event);
        }
        const report = reportJson(
          costReport(tree, { price: (answer) => catalog.costOf(answerModel(answer), answer.usage), tierOf: (model) => catalog.tierOf(model) }),
          'run',
        ).total;
        const viewer = view.view('journal.jsonl').total;
        const table = summary.costs?.total;

        const runs = new Set(journal.filter((event) => event.event === 'run.started').map((event) => event.run)).size;
        for (const count of [summary.runs, json.runs, report.runs, viewer.runs, table?.runs ?? runs]) expect(count).toBe(runs);
        for (const figures of [json, report, viewer, table ?? json, summary.tokens]) {
          expect(figures.inputTokens).toBe(result.usageTotal.inputTokens);
          expect(figures.outputTokens).toBe(result.usageTotal.outputTokens);
          expect(figures.cacheReadTokens).toBe(result.usageTotal.cacheReadTokens);
          expect(figures.cacheWriteTokens).toBe(result.usageTotal.cacheWriteTokens);
        }
        for (const count of [summary.steps, json.steps, report.steps, viewer.steps, table?.steps ?? json.steps]) expect(count).toBe(result.usageTotal.steps);
        // One amount: the JSON outputs print the same number, the summary and its table the same at full precision.
        expect(json.costUsd).toBe(report.costUsd);
        expect(viewer.costUsd).toBe(report.costUsd);
        expect(sameCost(summary.costUsd, table?.costUsd ?? summary.costUsd)).toBe(true);
        expect(sameCost(summary.costUsd, result.usageTotal.costUsd)).toBe(true);
      }),
      settings,
    );
  }, 120_000);
});
