/** Unit tests of reading a model's answer text as JSON: whole, fenced, or wrapped in prose (MODEL-6). */
import { describe, expect, it } from 'vitest';
import { parseModelJson } from '../../src/models/parse-json.js';

describe('parseModelJson', () => {
  it('parses JSON text as it is', () => {
    expect(parseModelJson(' {"calls": [], "output": 1} ')).toEqual({ ok: true, value: { calls: [], output: 1 } });
    expect(parseModelJson('[1, 2]')).toEqual({ ok: true, value: [1, 2] });
  });

  it('takes the first fenced block that is JSON, with prose around it', () => {
    const text = 'Plan:\n```text\nnot json\n```\nAnswer:\n```json\n{"calls": [], "output": "x"}\n```\nDone.';
    expect(parseModelJson(text)).toEqual({ ok: true, value: { calls: [], output: 'x' } });
  });

  it('finds an object wrapped in prose, past braces that are not JSON and braces inside strings', () => {
    const text = 'I would use {name} here. The answer: {"calls": [], "output": "a } in a string"} — hope it helps!';
    expect(parseModelJson(text)).toEqual({ ok: true, value: { calls: [], output: 'a } in a string' } });
  });

  it("reports the whole text's problem when no JSON is found", () => {
    const result = parseModelJson('no JSON {here at all');
    expect(result).toMatchObject({ ok: false, line: 1 });
    expect(parseModelJson('')).toMatchObject({ ok: false });
  });
});
