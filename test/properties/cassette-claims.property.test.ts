/** Property tests of a cassette's consumption (spec/cassettes.md CAS-2, CAS-3, CAS-16): shared by several claimants in any interleaving, each consumable entry is used at most once and no free matching entry is skipped; alone, the replay model consumes as it always did. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CassetteEntry } from '../../src/models/cassette.js';
import { type CassetteClaims, LocalCassetteClaims } from '../../src/models/cassette-claims.js';
import { ReplayModel } from '../../src/models/replay.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(150);

/** A call: which request asks, at which step. */
interface Asked {
  request: string;
  step: number;
}

const asked: fc.Arbitrary<Asked> = fc.record({ request: fc.constantFrom('a', 'b'), step: fc.integer({ min: 0, max: 1 }) });

/** Entries answering with their own index, matching a request and/or step or anything, some repeatable. */
const entries: fc.Arbitrary<CassetteEntry[]> = fc
  .array(
    fc.record({
      request: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
      step: fc.option(fc.integer({ min: 0, max: 1 }), { nil: undefined }),
      repeat: fc.boolean(),
    }),
    { minLength: 0, maxLength: 8 },
  )
  .map((shapes) =>
    shapes.map((shape, index) => ({
      match: { ...(shape.request === undefined ? {} : { request: shape.request }), ...(shape.step === undefined ? {} : { step: shape.step }) },
      ...(shape.repeat ? { repeat: true } : {}),
      solution: { calls: [], output: index },
    })),
  );

function requestOf(call: Asked): ModelRequest {
  return { requestName: call.request, step: call.step, messages: [{ role: 'user', content: 'go' }], schema: {}, config: {} };
}

function matching(entry: CassetteEntry, call: Asked): boolean {
  return (entry.match?.request === undefined || entry.match.request === call.request) && (entry.match?.step === undefined || entry.match.step === call.step);
}

/** The entry a call got (its output), or -1 when none answered it. */
async function answer(model: ReplayModel, call: Asked): Promise<number> {
  try {
    return ((await model.generate(requestOf(call))).solution as { output: number }).output;
  } catch {
    return -1;
  }
}

describe('a cassette shared by several claimants (CAS-16)', () => {
  it('uses each consumable entry at most once and never skips a free matching one, in any interleaving of the claims', async () => {
    await fc.assert(
      fc.asyncProperty(entries, fc.array(fc.array(asked, { maxLength: 5 }), { minLength: 1, maxLength: 4 }), fc.scheduler(), async (cassette, claimants, s) => {
        const shared = new LocalCassetteClaims();
        // Each claim reaches the shared store when the scheduler lets it, as Redis answers several processes in some order.
        const claims: CassetteClaims = { claim: (index) => s.schedule(Promise.resolve(index)).then((at) => shared.claim(at)) };
        const calls = claimants.flatMap((own) => {
          const model = new ReplayModel(cassette, 'shared').sharing(claims);
          return own.map((call) => ({ call, got: answer(model, call) }));
        });
        // Releases claims, including those a refused claim asks next, until every call has its answer.
        const results = await s.waitFor(Promise.all(calls.map(async ({ call, got }) => ({ call, index: await got }))));
        const used = results.map((result) => result.index).filter((index) => index >= 0 && cassette[index]?.repeat !== true);
        // At most once each.
        expect(new Set(used).size).toBe(used.length);
        for (const { call, index } of results) {
          if (index >= 0) expect(matching(cassette[index] as CassetteEntry, call)).toBe(true);
          // Every matching entry before the one it got (or any, when it got none) was consumable and used by some call.
          const before = index < 0 ? cassette.length : index;
          for (let earlier = 0; earlier < before; earlier += 1) {
            const entry = cassette[earlier] as CassetteEntry;
            if (!matching(entry, call)) continue;
            expect(entry.repeat).not.toBe(true);
            expect(used).toContain(earlier);
          }
        }
      }),
      settings,
    );
  });

  it('alone, answers every call with the first matching entry not used yet, repeatable ones never used up, as before the seam', async () => {
    await fc.assert(
      fc.asyncProperty(entries, fc.array(asked, { maxLength: 10 }), async (cassette, sequence) => {
        const model = new ReplayModel(cassette, 'alone');
        const usedBefore = new Set<number>();
        for (const call of sequence) {
          const expected = cassette.findIndex((entry, index) => (entry.repeat === true || !usedBefore.has(index)) && matching(entry, call));
          if (expected >= 0) usedBefore.add(expected);
          expect(await answer(model, call)).toBe(expected);
        }
      }),
      settings,
    );
  });
});
