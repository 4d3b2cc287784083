/** Property: for random Solutions split at random chunk boundaries, the streamed calls equal the final parse's calls, in order, as soon as they are complete. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallsStreamParser, type CompletedCall } from '../../src/models/incremental-json.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

const key = fc.oneof(fc.string(), fc.constantFrom('calls', 'output', '_tool', 'a"b', 'x\\y', '{', ']'));
const call = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tool: fc.string(), params: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }) }) },
  { weight: 2, arbitrary: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const otherKey = key.filter((name) => name !== 'calls');
const indent = fc.constantFrom<string | number>(0, 1, 2, '\t');

/** A Solution's text with `calls` anywhere among other keys, and where the calls value ends. */
const solutionText = fc
  .record({
    before: fc.array(fc.tuple(otherKey, fc.jsonValue({ maxDepth: 3 })), { maxLength: 3 }),
    calls: fc.array(call, { maxLength: 6 }),
    after: fc.array(fc.tuple(otherKey, fc.jsonValue({ maxDepth: 3 })), { maxLength: 3 }),
    indent,
    spacing: fc.constantFrom('', ' ', '\n  '),
  })
  .map(({ before, calls, after, indent: space, spacing }) => {
    const member = ([name, value]: [string, unknown]): string => `${spacing}${JSON.stringify(name)}${spacing}:${spacing}${JSON.stringify(value, null, space)}`;
    const head = `{${[...before.map(member), `${spacing}"calls"${spacing}:${spacing}`].join(',')}`;
    const callsText = JSON.stringify(calls, null, space);
    const tail = `${after.length > 0 ? ',' : ''}${after.map(member).join(',')}${spacing}}`;
    return { head, callsText, tail };
  });

function feed(parser: CallsStreamParser, text: string, cuts: number[]): CompletedCall[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((left, right) => left - right);
  const out: CompletedCall[] = [];
  let from = 0;
  for (const point of [...points, text.length]) {
    out.push(...parser.push(text.slice(from, point)));
    from = point;
  }
  return out;
}

describe('CallsStreamParser (property)', () => {
  it('yields exactly the calls of the final parse, in order, all of them by the end of the calls array', () => {
    fc.assert(
      fc.property(
        solutionText,
        fc.constantFrom('', '```json\n', 'Here it is: '),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        ({ head, callsText, tail }, preamble, cuts, tailCuts) => {
          const expected = (JSON.parse(`${head}${callsText}${tail}`) as { calls: unknown[] }).calls;
          const parser = new CallsStreamParser();
          const early = feed(parser, `${preamble}${head}${callsText}`, cuts);
          const late = feed(parser, tail, tailCuts);
          expect(late).toEqual([]);
          expect(early.map((item) => item.index)).toEqual(expected.map((_, index) => index));
          expect(early.map((item) => item.value)).toEqual(expected);
          expect(parser.completed).toBe(expected.length);
        },
      ),
      settings,
    );
  });
});
