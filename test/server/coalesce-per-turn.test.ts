/** Lookups shared by the requests of one turn (SERVE-12): one per key per turn, started after the turn, failures kept to their key. */
import { describe, expect, it } from 'vitest';
import { coalescePerTurn } from '../../src/server/coalesce-per-turn.js';

/** A lookup of strings that records every batch it was given. */
function recordingLookup(fail: ReadonlySet<string> = new Set()) {
  const batches: string[][] = [];
  const lookUp = coalescePerTurn(
    (key: string) => key,
    (batch) => {
      batches.push(batch);
      return batch.map(async (key) => {
        if (fail.has(key)) throw new Error(`no ${key}`);
        return `found ${key}`;
      });
    },
  );
  return { batches, lookUp };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescePerTurn', () => {
  it('looks each key up once for all the calls of one turn, all keys in one batch', async () => {
    const { batches, lookUp } = recordingLookup();
    const results = await Promise.all(['a', 'b', 'a', 'c', 'b', 'a'].map(lookUp));
    expect(results).toEqual(['found a', 'found b', 'found a', 'found c', 'found b', 'found a']);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });

  it('starts no lookup during the turn that asked, and a new one for the calls of a later turn', async () => {
    const { batches, lookUp } = recordingLookup();
    const first = lookUp('a');
    expect(batches).toEqual([]);
    await nextTurn();
    expect(batches).toEqual([['a']]);
    // A call made after the first lookup started never joins it: it gets a lookup of its own.
    const second = lookUp('a');
    expect(await first).toBe('found a');
    expect(await second).toBe('found a');
    expect(batches).toEqual([['a'], ['a']]);
  });

  it('fails the calls of a failed key only', async () => {
    const { lookUp } = recordingLookup(new Set(['bad']));
    const [good, bad, badAgain] = await Promise.allSettled([lookUp('good'), lookUp('bad'), lookUp('bad')]);
    expect(good).toEqual({ status: 'fulfilled', value: 'found good' });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'no bad' } });
    expect(badAgain).toMatchObject({ status: 'rejected', reason: { message: 'no bad' } });
  });

  it('fails every call of the turn when the batch cannot even start', async () => {
    const lookUp = coalescePerTurn(
      (key: string) => key,
      () => {
        throw new Error('cannot look');
      },
    );
    const results = await Promise.allSettled([lookUp('a'), lookUp('b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
