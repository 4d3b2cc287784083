/** Property test of the batched access log (spec/serving.md SERVE-10): whatever the lines, turns and flushes, every line is written once, in order. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_BYTES, batchedLog } from '../../src/files/batched-log.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

const turn = () => new Promise<void>((resolveTurn) => setImmediate(resolveTurn));

/** One step: a line added, the end of a turn of the event loop, or an explicit flush. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('line' as const), text: fc.string({ maxLength: 40 }).map((text) => text.replace(/\n/g, ' ')) }),
  fc.record({ kind: fc.constant('big' as const), size: fc.integer({ min: BATCH_BYTES / 4, max: BATCH_BYTES }) }),
  fc.constant({ kind: 'turn' as const }),
  fc.constant({ kind: 'flush' as const }),
);

describe('batched access log (SERVE-10)', () => {
  it('writes every line exactly once, in order, never more than one turn late', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const writes: string[] = [];
        const log = batchedLog((text) => writes.push(text));
        const lines: string[] = [];
        for (const each of steps) {
          if (each.kind === 'line') {
            lines.push(each.text);
            log.line(each.text);
          } else if (each.kind === 'big') {
            const text = 'x'.repeat(each.size);
            lines.push(text);
            log.line(text);
          } else if (each.kind === 'turn') {
            await turn();
            expect(writes.join('')).toBe(lines.map((line) => `${line}\n`).join(''));
          } else log.flush();
          expect(writes.every((text) => text.length > 0)).toBe(true);
        }
        await turn();
        expect(writes.join('')).toBe(lines.map((line) => `${line}\n`).join(''));
      }),
      settings,
    );
  });

  it('writes the lines of one turn of the event loop in one write (SERVE-10)', async () => {
    const writes: string[] = [];
    const log = batchedLog((text) => writes.push(text));
    for (let index = 0; index < 40; index++) log.line(`GET /hello.json ${index}`);
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split('\n').filter(Boolean)).toHaveLength(40);
  });
});
