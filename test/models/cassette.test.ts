/** The cassette validator agrees with the published schema (spec/schemas/cassette.schema.json) and only adds checks of fields it leaves open. */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { validateCassette } from '../../src/models/cassette.js';

const published = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(new URL('../../spec/schemas/cassette.schema.json', import.meta.url), 'utf8')) as object);

function ours(value: unknown): boolean {
  try {
    validateCassette(value, 'sample.json');
    return true;
  } catch {
    return false;
  }
}

const samples: Array<[string, unknown]> = [
  ['the contract example', { version: 1, entries: [{ match: { request: 'composer', step: 0, contains: 'ballad' }, solution: { calls: [{ _tool: 'synth', sound: 'piano' }], output: null }, usage: { inputTokens: 120, outputTokens: 40 } }] }],
  ['no entries', { version: 1, entries: [] }],
  ['a text entry that repeats, without match', { version: 1, entries: [{ text: 'oops', repeat: true }] }],
  ['extra entry fields', { version: 1, entries: [{ solution: {}, note: 'kept', model: 'openai:x', delayMs: 5 }] }],
  ['version 2', { version: 2, entries: [] }],
  ['no version', { entries: [] }],
  ['both solution and text', { version: 1, entries: [{ solution: {}, text: '{}' }] }],
  ['neither solution nor text', { version: 1, entries: [{ match: {} }] }],
  ['a negative step', { version: 1, entries: [{ match: { step: -1 }, text: '' }] }],
  ['an unknown match field', { version: 1, entries: [{ match: { requst: 'x' }, text: '' }] }],
  ['a solution that is not an object', { version: 1, entries: [{ solution: [1] }] }],
];

describe('cassette validation', () => {
  it.each(samples)('agrees with the published schema on %s', (_, value) => {
    expect(ours(value)).toBe(published(value));
  });

  it('also checks usage counts, which the published schema leaves open', () => {
    const value = { version: 1, entries: [{ text: '', usage: { inputTokens: -1, tokens: 3 } }] };
    expect(published(value)).toBe(true);
    expect(ours(value)).toBe(false);
  });
});
