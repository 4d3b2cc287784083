/** Unit tests of src/protocol/json.ts: safe parsing with line and column (DOC-5), and JSON pointers (RFC 6901). */
import { describe, expect, it } from 'vitest';
import { lineAndColumn, MAX_NESTING_DEPTH, nestingProblem, parseJson, pointer, pointerSegment } from '../../src/protocol/json.js';

/** Splits a text marked with `⟦` before its bad character into the text and the expected 1-based position. */
function marked(text: string): { text: string; line: number; column: number } {
  const at = text.indexOf('⟦');
  const before = text.slice(0, at).split('\n');
  return { text: text.replace('⟦', ''), line: before.length, column: (before.at(-1) ?? '').length + 1 };
}

describe('parseJson', () => {
  it('returns the parsed value of valid JSON', () => {
    expect(parseJson('{"a": [1, null, "x"]}')).toEqual({ ok: true, value: { a: [1, null, 'x'] } });
    expect(parseJson(' 42 ')).toEqual({ ok: true, value: 42 });
  });

  it('never throws on invalid text: it returns a failure that starts with a full sentence', () => {
    const result = parseJson('{');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toMatch(/^Expected valid JSON: .+\.$/);
  });

  // Node 20's V8 reports "Unexpected token 'x', ..." with no position: the position is found by
  // parsing prefixes, and a prefix that is merely cut short must not count as the problem.
  it.each([
    ['an unexpected closing brace', '{"a":⟦}'],
    ['a trailing comma in an array', '[1,2,⟦]'],
    ['a bare word on the third line', '{\n  "a": 1,\n  "b": ⟦x\n}'],
    ['a truncated literal followed by a newline', '{\n  "name": "x",\n  "list": [1, 2, 3],\n  "bad": tru⟦\n}'],
    ['a closing brace where an array element belongs', '{\n"a": [1,\n2,\n⟦}'],
    ['a truncated literal inside nested arrays', '{\n\t"a": {"b": [true, fals⟦]}}'],
    ['a single-quoted string', "[⟦'x']"],
    ['a bad token after a long string', `{"k": "${'v'.repeat(100)}", "z": ⟦?}`],
  ])('gives the line and column of %s even when the engine reports no position', (_name, text) => {
    const expected = marked(text);
    const result = parseJson(expected.text);
    expect(result).toMatchObject({ ok: false, line: expected.line, column: expected.column });
  });

  it.each([
    ['a missing comma between properties', '{"a": 1 ⟦"b": 2}'],
    ['a control character inside a string', '{"a": "b⟦\nc"}'],
    ['text after the value', '{"a":1}⟦x'],
    ['a minus sign without digits', '[-⟦x]'],
  ])('gives the line and column of %s when the engine reports a position', (_name, text) => {
    const expected = marked(text);
    expect(parseJson(expected.text)).toMatchObject({ ok: false, line: expected.line, column: expected.column });
  });

  it('drops the engine position and its echo of the text from the message', () => {
    const long = parseJson(`{"k": "${'v'.repeat(100)}", "z": ?}`);
    const short = parseJson('{"secret": x}');
    const after = parseJson('{"a":1}x');
    for (const result of [long, short, after]) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.message).not.toMatch(/position|is not valid JSON|vvvv|secret/);
    }
  });

  it('points past the end for empty or truncated text', () => {
    expect(parseJson('')).toMatchObject({ ok: false, line: 1, column: 1 });
    expect(parseJson('{\n  "a": [1, 2')).toMatchObject({ ok: false, line: 2, column: 13 });
  });
});

describe('lineAndColumn', () => {
  it('counts lines and columns from 1', () => {
    const text = 'ab\ncd\n\nef';
    expect(lineAndColumn(text, 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn(text, 1)).toEqual({ line: 1, column: 2 });
    expect(lineAndColumn(text, 3)).toEqual({ line: 2, column: 1 });
    expect(lineAndColumn(text, 6)).toEqual({ line: 3, column: 1 });
    expect(lineAndColumn(text, 8)).toEqual({ line: 4, column: 2 });
  });
});

describe('JSON pointers', () => {
  it('escapes "~" as "~0" and "/" as "~1", in that order (RFC 6901)', () => {
    expect(pointerSegment('a/b')).toBe('a~1b');
    expect(pointerSegment('a~b')).toBe('a~0b');
    // "~1" written literally must not read back as "/": the tilde is escaped first.
    expect(pointerSegment('~1')).toBe('~01');
    expect(pointerSegment(3)).toBe('3');
  });

  it('joins segments with a leading slash each, and the empty pointer names the whole document', () => {
    expect(pointer('context', 0, 'tool', 'a/b')).toBe('/context/0/tool/a~1b');
    expect(pointer()).toBe('');
    expect(pointer('')).toBe('/');
  });
});

describe('how deep JSON may nest (DOC-10)', () => {
  const arrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('parses text nested MAX_NESTING_DEPTH containers deep', () => {
    expect(parseJson(arrays(MAX_NESTING_DEPTH)).ok).toBe(true);
  });

  it('refuses text nested one level deeper, naming the pointer, line and column of the first container too deep', () => {
    const text = `{"ok": [1, "[[[\\"["],\n "deep": ${arrays(MAX_NESTING_DEPTH)}}`;
    const result = parseJson(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.pointer).toBe(`/deep${'/0'.repeat(MAX_NESTING_DEPTH - 1)}`);
    expect(result.line).toBe(2);
    expect(result.column).toBe(' "deep": '.length + MAX_NESTING_DEPTH);
    expect(result.message).toBe(`Expected JSON nested at most 100 levels deep, but the value at ${result.pointer} is nested deeper.`);
  });

  it('refuses text nested 100,000 levels deep without overflowing the stack', () => {
    const result = parseJson(`{"a": ${arrays(100_000)}}`);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.pointer?.startsWith('/a/0/0/')).toBe(true);
  });

  it('finds the first container too deep in a value, whatever the limit', () => {
    // The object, the array, the inner object and the empty array: four levels.
    expect(nestingProblem({ a: [1, { b: [] }] }, 4)).toBeUndefined();
    expect(nestingProblem({ a: [1, { b: [] }] }, 3)).toBe('/a/1/b');
    expect(nestingProblem({ a: [1, { b: [] }] }, 2)).toBe('/a/1');
    expect(nestingProblem({ 'x/y': {} }, 1)).toBe('/x~1y');
    expect(nestingProblem('text', 0)).toBeUndefined();
  });

  it('reports a value that contains itself, and walks a value shared many times over only once per depth', () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(nestingProblem(cyclic)).toBe('/0'.repeat(MAX_NESTING_DEPTH));
    // 60 levels of a node shared by both children: 2⁶⁰ paths, 60 distinct nodes.
    let shared: unknown = 'leaf';
    for (let level = 0; level < 60; level++) shared = [shared, shared];
    expect(nestingProblem(shared)).toBeUndefined();
    expect(nestingProblem(shared, 59)).toBe('/0'.repeat(59));
  });
});
