/**
 * Property tests of the trace viewer (spec/viewer.md): for generated run trees run by the runtime,
 * the page's figures are the runtime's own (the total is the top run's usageTotal, VIEW-4), every
 * run, model call and call has its bar (VIEW-3), the critical path is one chain from the top, and
 * any data embeds in the page and reads back exactly (VIEW-1).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import { embedJson } from '../../src/viewer/render-page.js';
import { jsonCost } from '../../src/cli/report/cost-report.js';
import { TraceView } from '../../src/cli/trace-view.js';
import type { ViewFigures } from '../../src/viewer/view-data.js';
import { TreeRuntime, shapeOf } from '../helpers/fan-out-tree.js';
import { cassetteOf, treeArbitrary } from '../helpers/tree-cassette.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(40);

const catalog = new ModelCatalog(
  {
    models: {
      'test:cheap': { tier: 'fast', price: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
      'test:dear': { tier: 'deep', price: { input: 5, output: 25 } },
    },
  },
  { warn: () => undefined },
);

/** Sums in another order may differ in the last binary digits; unknown stays unknown. */
function expectSameFigures(figures: ViewFigures, usage: UsageSummary): void {
  expect([figures.inputTokens, figures.outputTokens, figures.cacheReadTokens, figures.cacheWriteTokens, figures.steps]).toEqual([
    usage.inputTokens,
    usage.outputTokens,
    usage.cacheReadTokens,
    usage.cacheWriteTokens,
    usage.steps,
  ]);
  if (figures.costUsd === null || usage.costUsd === null) expect(figures.costUsd).toBe(usage.costUsd);
  // The page's figures are rounded as every JSON output rounds money (CLI-28).
  else expect(figures.costUsd).toBe(jsonCost(usage.costUsd));
}

describe('the trace viewer (properties)', () => {
  it("shows each run's usageTotal as its subtree, the top run's as the total, and a bar for every run, model call and call", async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, async ({ parents, steps }) => {
        const shape = shapeOf(parents);
        const sink = memorySink();
        const model = new ReplayModel(cassetteOf(shape, steps), 'inline', { prices: catalog });
        const result = await new TreeRuntime(shape).runTree({ model, tracer: new Tracer([sink]), maxDepth: shape.length });
        const view = new TraceView();
        for (const event of sink.events) view.apply(JSON.parse(JSON.stringify(event)));
        const data = view.view('trace.jsonl');

        expect(data.runs).toHaveLength(shape.length);
        expectSameFigures(data.total, result.usageTotal);
        const completed = new Map(sink.events.filter((event) => event.event === 'run.completed').map((event) => [event.run, event.usageTotal as UsageSummary]));
        for (const run of data.runs) expectSameFigures(run.subtree, completed.get(run.run) as UsageSummary);

        const count = (name: string) => sink.events.filter((event) => event.event === name).length;
        expect(data.spans.filter((span) => span.kind === 'run')).toHaveLength(shape.length);
        expect(data.spans.filter((span) => span.kind === 'model')).toHaveLength(count('model.request'));
        expect(data.spans.filter((span) => span.kind === 'call')).toHaveLength(count('call.started'));
        for (const span of data.spans) expect(span.end ?? Number.NaN).toBeGreaterThanOrEqual(span.start);

        // The critical path: the top run, then one child of each critical run, down to a run without delegations.
        const critical = data.runs.filter((run) => run.critical);
        expect(critical[0]?.parent).toBeNull();
        for (const [index, run] of critical.entries()) {
          if (index > 0) expect(run.parent).toBe(critical[index - 1]?.run);
          expect(run.depth).toBe(index);
        }
        expect(critical[critical.length - 1]?.children).toEqual([]);
      }),
      settings,
    );
  });

  it('embeds any data in the page so that no script element can end early and JSON.parse gives it back', () => {
    // Strings rich in the characters that could break out: <, /, !, -, letters of "script", U+2028 and U+2029.
    const risky = fc.string({
      unit: fc.constantFrom('<', '/', '!', '-', 's', 'S', 'c', 'r', 'i', 'p', 't', '>', '\u2028', '\u2029', '"', '\\', 'é', '\u0000'),
    });
    const value = fc.oneof(risky, fc.jsonValue(), fc.dictionary(risky, fc.oneof(risky, fc.jsonValue())), fc.array(risky));
    fc.assert(
      fc.property(value, (data) => {
        const embedded = embedJson(data);
        expect(embedded).not.toMatch(/<\/script|<!--|<script|[\u2028\u2029]/i);
        expect(JSON.parse(embedded)).toEqual(JSON.parse(JSON.stringify(data)));
      }),
      { ...settings, numRuns: 500 },
    );
  });
});
