/**
 * Property test of the tolerant trace reader behind `delegate-run view` (spec/viewer.md VIEW-8):
 * whatever lines a trace holds, it yields exactly its event lines in order and names every other
 * non-blank line by number, where the strict reader (the report's) stops at the first.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BadTraceLine, readTraceFile } from '../../src/cli/report/read-trace.js';
import type { TraceEventBase } from '../../src/protocol/trace/events.js';
import { tempDir } from '../helpers/cli.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(60);

/** A line that is an event. */
const eventLine = fc
  .record({ run: fc.constantFrom('run_a', 'run_b'), event: fc.constantFrom('model.request', 'call.started', 'custom.thing'), n: fc.nat() })
  .map(({ run, event, n }) => ({ kind: 'event' as const, text: JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', event, run, parent: null, depth: 0, n }) }));

/** A line that is not: cut JSON (a run killed mid-write), JSON that is no event, an event with a field of the wrong type. */
const badLine = fc
  .oneof(
    eventLine.chain(({ text }) => fc.integer({ min: 1, max: text.length - 1 }).map((cut) => text.slice(0, cut))),
    fc.constantFrom('[1, 2]', '"text"', 'null', '{"event":"run.started"}', 'not json at all'),
    fc.nat().map((depth) => JSON.stringify({ ts: 'x', event: 'model.response', run: 'run_a', parent: null, depth, step: -1 })),
  )
  .map((text) => ({ kind: 'bad' as const, text }));

const blankLine = fc.constantFrom('', '   ').map((text) => ({ kind: 'blank' as const, text }));

describe('the tolerant trace reader (properties)', () => {
  it('yields every event line in order and names every bad line, skipping blanks', async () => {
    const folder = tempDir('tolerant-');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof({ weight: 4, arbitrary: eventLine }, badLine, blankLine), { maxLength: 30 }), async (lines) => {
        const path = join(folder, 'trace.jsonl');
        writeFileSync(path, lines.map((line) => line.text).join('\n'));
        const bad: BadTraceLine[] = [];
        const events: TraceEventBase[] = [];
        for await (const event of readTraceFile(path, { onBadLine: (line) => bad.push(line) })) events.push(event);
        expect(events).toEqual(lines.filter((line) => line.kind === 'event').map((line) => JSON.parse(line.text)));
        const numbers = lines.flatMap((line, index) => (line.kind === 'bad' ? [index + 1] : []));
        expect(bad.map((line) => line.line)).toEqual(numbers);
        for (const line of bad) expect(line.message).toContain(`${path}:${line.line}`);
        // The strict reader stops at the first bad line, naming it.
        const strict = (async () => {
          for await (const _event of readTraceFile(path)) {
            // Reading is all.
          }
        })();
        if (numbers.length === 0) await expect(strict).resolves.toBeUndefined();
        else await expect(strict).rejects.toThrow(`${path}:${numbers[0]}`);
      }),
      settings,
    );
  });
});
