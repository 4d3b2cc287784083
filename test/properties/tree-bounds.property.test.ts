/** Property tests of the run-tree bounds: model calls in flight never exceed the limit and every run completes (LOOP-16); runs stop at the run bound (DEL-19). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { TreeModel, TreeRuntime, shapeOf, turns } from '../helpers/fan-out-tree.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(30);

/** A random tree of 1 to 30 runs (each node's parent is an earlier node) and how long each node's model answers take, in event-loop turns. */
const treeArbitrary = fc.integer({ min: 1, max: 30 }).chain((size) =>
  fc.record({
    parents: fc.tuple(...Array.from({ length: size - 1 }, (_, index) => fc.nat({ max: index }))),
    holds: fc.tuple(...Array.from({ length: size }, () => fc.nat({ max: 3 }))),
  }),
);

async function runTree(parents: number[], holds: number[], limits: { maxConcurrency?: number; maxRuns?: number }) {
  const shape = shapeOf(parents);
  const model = new TreeModel(shape, (request) => turns(holds[Number(request.requestName.slice(1))] ?? 0));
  const sink = memorySink();
  const result = await new TreeRuntime(shape).runTree({ model, tracer: new Tracer([sink]), maxDepth: shape.length, ...limits });
  const count = (event: string) => sink.events.filter((each) => each.event === event).length;
  return { shape, model, result, count };
}

describe('run-tree bounds (properties)', () => {
  it('never has more model calls in flight than maxConcurrency, and every run of the tree completes', async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, fc.integer({ min: 1, max: 6 }), async ({ parents, holds }, maxConcurrency) => {
        const { shape, model, result, count } = await runTree(parents, holds, { maxConcurrency });
        expect(model.maxInFlight).toBeLessThanOrEqual(maxConcurrency);
        expect(result.ok).toBe(true);
        expect(count('run.completed')).toBe(shape.length);
      }),
      settings,
    );
  });

  it('starts exactly min(tree size, maxRuns) runs, and fails with budget_exceeded exactly when the tree is larger', async () => {
    await fc.assert(
      fc.asyncProperty(treeArbitrary, fc.integer({ min: 1, max: 30 }), async ({ parents, holds }, maxRuns) => {
        const { shape, result, count } = await runTree(parents, holds, { maxRuns });
        expect(count('run.started')).toBe(Math.min(shape.length, maxRuns));
        if (shape.length <= maxRuns) expect(result.ok).toBe(true);
        else expect(!result.ok && result.error.code).toBe('budget_exceeded');
      }),
      settings,
    );
  });
});
