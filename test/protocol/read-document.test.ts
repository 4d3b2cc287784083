/** Unit tests of src/protocol/read-document.ts: one way to read a JSON document (ERR-7). */
import { describe, expect, it } from 'vitest';
import { checkDocument, readDocument } from '../../src/protocol/read-document.js';

describe('readDocument', () => {
  it('parses and validates against a schema of spec/schemas', () => {
    expect(readDocument('{"version":1,"entries":[]}', 'c.json', 'cassette.schema.json')).toEqual({ ok: true, value: { version: 1, entries: [] } });
  });

  it('reports a syntax error as one problem with its line and column', () => {
    const reading = readDocument('{\n  "version": 1,\n}', 'c.json', 'cassette.schema.json');
    expect(reading.ok).toBe(false);
    if (reading.ok) return;
    expect(reading.problems).toHaveLength(1);
    expect(reading.problems[0]).toMatchObject({ document: 'c.json', pointer: '', line: 3 });
  });

  it('reports every schema problem with the document and its JSON pointer', () => {
    const reading = checkDocument({ version: 2, entries: [{ match: { step: -1 } }] }, 'c.json', 'cassette.schema.json');
    expect(reading.ok).toBe(false);
    if (reading.ok) return;
    const pointers = reading.problems.map((problem) => problem.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/version', '/entries/0/match/step']));
    for (const problem of reading.problems) expect(problem.document).toBe('c.json');
  });

  it('accepts any JSON without a schema', () => {
    expect(readDocument('[1, "two"]', 'x.json')).toEqual({ ok: true, value: [1, 'two'] });
  });
});
