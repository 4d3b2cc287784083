/** Unit tests of the streaming calls scanner: the cases that matter for a Solution's text. */
import { describe, expect, it } from 'vitest';
import { CallsStreamParser } from '../../src/models/incremental-json.js';

function streamed(chunks: string[]): Array<[number, unknown]> {
  const parser = new CallsStreamParser();
  return chunks.flatMap((chunk) => parser.push(chunk).map((item): [number, unknown] => [item.index, item.value]));
}

describe('CallsStreamParser', () => {
  it('yields a call the moment its closing brace arrives', () => {
    const parser = new CallsStreamParser();
    expect(parser.push('{"calls": [{"_tool": "a", "x": "}]"')).toEqual([]);
    expect(parser.push('}')).toEqual([{ index: 0, value: { _tool: 'a', x: '}]' } }]);
    expect(parser.push(', {"_tool": "b"}], "output": null}')).toEqual([{ index: 1, value: { _tool: 'b' } }]);
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
