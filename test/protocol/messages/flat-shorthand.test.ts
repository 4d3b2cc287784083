/** Unit tests of src/protocol/messages/flat-shorthand.ts: the flat shorthand of input and state (MSG-6). */
import { describe, expect, it } from 'vitest';
import { normalize } from '../../helpers/builtin-messages.js';

describe.each(['input', 'state'])('%s (MSG-6)', (type) => {
  it(`folds every field but type, schema, description and _instance into ${type}`, () => {
    const message = { type, name: 'Ada', count: 1, schema: { type: 'object' }, description: 'd', _instance: 'fr' };
    expect(normalize(message)).toEqual({ type, schema: { type: 'object' }, description: 'd', _instance: 'fr', [type]: { name: 'Ada', count: 1 } });
  });

  it(`keeps a written ${type} field as it is, folding nothing`, () => {
    const message = { type, [type]: { a: 1 }, description: 'd' };
    expect(normalize(message)).toEqual(message);
  });

  it(`keeps a non-object ${type} value as it is`, () => {
    expect(normalize({ type, [type]: 'plain text' })).toEqual({ type, [type]: 'plain text' });
  });
});

describe('keys named __proto__ (DATA-2)', () => {
  it('keeps a __proto__ field of the flat state and input shorthand as a data key', () => {
    const state = normalize(JSON.parse('{"type":"state","__proto__":{"x":1},"y":2}')) as { state: object };
    expect(Object.getPrototypeOf(state.state)).toBe(Object.prototype);
    expect(Object.entries(state.state)).toEqual([
      ['__proto__', { x: 1 }],
      ['y', 2],
    ]);
    const input = normalize(JSON.parse('{"type":"input","__proto__":1}')) as { input: object };
    expect(Object.entries(input.input)).toEqual([['__proto__', 1]]);
  });
});
