// Generated run trees as replay cassettes, for the property tests of the cost report and the viewer: each node delegates to its children, then answers.
import { ModelCatalog } from '../../src/models/model-catalog.js';
import fc from 'fast-check';
import type { CassetteEntry } from '../../src/models/cassette.js';

/** Models an entry may name: two priced ones, one the catalog does not price, and none (a replay that costs 0, CAS-14). */
/** The catalog that prices {@link MODELS}: one cheap, one dear (with cache prices), one unpriced. */
export const pricedCatalog = new ModelCatalog(
  {
    models: {
      'test:cheap': { tier: 'fast', price: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
      'test:dear': { tier: 'deep', price: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
      'test:unpriced': { tier: 'balanced' },
    },
  },
  { warn: () => undefined },
);

export const MODELS = ['test:cheap', 'test:dear', 'test:unpriced', undefined] as const;

/** One model answer of a node: its model, its tokens, and whether a broken answer comes first (a re-ask, LOOP-8). */
export const answerArbitrary = fc.record({
  model: fc.constantFrom(...MODELS),
  usage: fc.record({
    inputTokens: fc.nat({ max: 50_000 }),
    outputTokens: fc.nat({ max: 5_000 }),
    cacheReadTokens: fc.nat({ max: 20_000 }),
    cacheWriteTokens: fc.nat({ max: 2_000 }),
  }),
  reask: fc.boolean(),
});

export type Answer = typeof answerArbitrary extends fc.Arbitrary<infer T> ? T : never;

/** A tree of 1 to 7 runs (each node's parent an earlier node), each node answering in 1 to 3 steps. */
export const treeArbitrary = fc.integer({ min: 1, max: 7 }).chain((size) =>
  fc.record({
    parents: fc.tuple(...Array.from({ length: size - 1 }, (_, index) => fc.nat({ max: index }))),
    steps: fc.tuple(...Array.from({ length: size }, () => fc.array(answerArbitrary, { minLength: 1, maxLength: 3 }))),
  }),
);

/**
 * The cassette of a tree: node `i` (request `n<i>`) delegates to all its children at step 0, waits
 * in the steps after, and answers at its last step; a re-asked step first gets text that is not JSON.
 */
export function cassetteOf(shape: number[][], steps: Answer[][]): CassetteEntry[] {
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
