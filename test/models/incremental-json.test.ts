/** Unit tests of the streaming calls scanner: the cases that matter for a Solution's text. */
import { describe, expect, it } from 'vitest';
import { CallsStreamParser } from '../../src/models/incremental-json.js';

function streamed(chunks: string[]): Array<[number, unknown]> {
  const parser = new CallsStreamParser();
  return chunks.flatMap((chunk) => parser.push(chunk).map((item): [number, unknown] => [item.index, item.value]));
}

describe('CallsStreamParser', () => {
  it('yields a call the moment its closing brace arrives, with where it ends in the text', () => {
    const parser = new CallsStreamParser();
    const head = '  {"calls": [{"_tool": "a", "x": "}]"';
    expect(parser.push(head)).toEqual([]);
    expect(parser.objectStart).toBe(2);
    expect(parser.push('}')).toEqual([{ index: 0, value: { _tool: 'a', x: '}]' }, end: head.length + 1 }]);
    const tail = ', {"_tool": "b"}], "output": null}';
    expect(parser.push(tail)).toEqual([{ index: 1, value: { _tool: 'b' }, end: head.length + 1 + tail.indexOf(']') }]);
  });

  it('ends a scalar element before the character that closes it', () => {
    const parser = new CallsStreamParser();
    expect(parser.push('{"calls": [12, "é", 3]}')).toEqual([
      { index: 0, value: 12, end: 13 },
      { index: 1, value: 'é', end: 18 },
      { index: 2, value: 3, end: 21 },
    ]);
  });

  it('ignores "calls" keys below the top level and anything after the top-level object', () => {
    expect(streamed(['{"output": {"calls": [1, 2]}, "meta": [{"calls": [3]}], "calls": [{"_tool": "z"}]} {"calls": [9]}'])).toEqual([[0, { _tool: 'z' }]]);
  });

  it('reads keys with escapes and skips a code fence before the object', () => {
    expect(streamed(['```json\n{"cal', 'ls\\u0073": [1], "\\u0063alls": [true, "s", null, 2.5e3]}\n```'])).toEqual([
      [0, true],
      [1, 's'],
      [2, null],
      [3, 2500],
    ]);
  });

  it('yields nothing for an empty or absent calls array', () => {
    expect(streamed(['{"calls": [], "output": 1}'])).toEqual([]);
    expect(streamed(['{"output": [{"_tool": "x"}]}'])).toEqual([]);
  });
});
