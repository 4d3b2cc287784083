/** Cassette validation (spec/schemas/cassette.schema.json, the one schema the code uses): fixtures with their verdicts. */
import { describe, expect, it } from 'vitest';
import { validateCassette } from '../../src/models/cassette.js';
import { ModelConfigError } from '../../src/models/config-error.js';

function verdict(value: unknown): boolean {
  try {
    validateCassette(value, 'sample.json');
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ModelConfigError);
    return false;
  }
}

const samples: Array<[string, unknown, boolean]> = [
  [
    'the contract example',
    {
      version: 1,
      entries: [
        {
          match: { request: 'composer', step: 0, contains: 'ballad' },
          solution: { calls: [{ _tool: 'synth', sound: 'piano' }], output: null },
          usage: { inputTokens: 120, outputTokens: 40 },
        },
      ],
    },
    true,
  ],
  ['no entries', { version: 1, entries: [] }, true],
  ['a text entry that repeats, without match', { version: 1, entries: [{ text: 'oops', repeat: true }] }, true],
  ['extra entry fields', { version: 1, entries: [{ solution: {}, note: 'kept', model: 'openai:x', delayMs: 5 }] }, true],
  ['version 2', { version: 2, entries: [] }, false],
  ['no version', { entries: [] }, false],
  ['both solution and text', { version: 1, entries: [{ solution: {}, text: '{}' }] }, false],
  ['neither solution nor text', { version: 1, entries: [{ match: {} }] }, false],
  ['a negative step', { version: 1, entries: [{ match: { step: -1 }, text: '' }] }, false],
  ['an unknown match field', { version: 1, entries: [{ match: { requst: 'x' }, text: '' }] }, false],
  ['a solution that is not an object', { version: 1, entries: [{ solution: [1] }] }, false],
  ['a negative usage count', { version: 1, entries: [{ text: '', usage: { inputTokens: -1 } }] }, false],
  ['an unknown usage field', { version: 1, entries: [{ text: '', usage: { tokens: 3 } }] }, false],
];

describe('cassette validation', () => {
  it.each(samples)('judges %s', (_, value, valid) => {
    expect(verdict(value)).toBe(valid);
  });

  it('names the file and the pointer of each problem', () => {
    try {
      validateCassette({ version: 1, entries: [{ match: { stpe: 1 }, solution: {}, text: '' }] }, 'sample.json');
      expect.unreachable();
    } catch (error) {
      const problems = (error as ModelConfigError).problems;
      expect(problems.map((problem) => problem.pointer)).toEqual(expect.arrayContaining(['/entries/0/match/stpe', '/entries/0']));
      expect(problems.every((problem) => problem.document === 'sample.json')).toBe(true);
    }
  });
});
