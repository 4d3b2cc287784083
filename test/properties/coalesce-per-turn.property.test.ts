/** Property (SERVE-12): however calls fall into turns, each gets the lookup of its own key, and each key is looked up once per turn, after the calls that share it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalescePerTurn } from '../../src/server/coalesce-per-turn.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

describe('coalescePerTurn', () => {
  it('answers every call with its own key, one lookup per key per turn, none started before its calls', async () => {
    const turns = fc.array(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 12 }), { minLength: 1, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(turns, async (keysByTurn) => {
        let clock = 0;
        const batches: { keys: string[]; startedAt: number }[] = [];
        const lookUp = coalescePerTurn(
          (key: string) => key,
          (batch) => {
            batches.push({ keys: batch, startedAt: clock });
            return batch.map(async (key) => `${key}@${batches.length}`);
          },
        );
        const calls: { key: string; madeAt: number; answer: Promise<string> }[] = [];
        for (const keys of keysByTurn) {
          clock++;
          for (const key of keys) calls.push({ key, madeAt: clock, answer: lookUp(key) });
          await new Promise((resolve) => setImmediate(resolve));
        }
        const nonEmpty = keysByTurn.filter((keys) => keys.length > 0);
        expect(batches.map((batch) => batch.keys)).toEqual(nonEmpty.map((keys) => [...new Set(keys)]));
        for (const call of calls) {
          const answer = await call.answer;
          const [key, batchNumber] = answer.split('@');
          expect(key).toBe(call.key);
          // The batch that answered started in the same turn as the call, after it was made.
          expect(batches[Number(batchNumber) - 1]?.startedAt).toBe(call.madeAt);
        }
      }),
      settings,
    );
  });
});
