/** Unit tests of src/protocol/messages/data.ts: the shorthand, the rendering and the data semantics of data messages. */
import { describe, expect, it } from 'vitest';
import { dataHandler } from '../../../src/protocol/messages/data.js';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('data: the shorthand (MSG-5)', () => {
  it('takes the kind "data" when kind is omitted', () => {
    expect(normalize({ type: 'data', data: { a: 1 } })).toEqual({ type: 'data', kind: 'data', data: { a: 1 } });
  });

  it('keeps a written kind and every other field', () => {
    const message = { type: 'data', kind: 'hr', data: [], schema: { type: 'array' }, description: 'Staff.', _instance: 'fr' };
    expect(normalize(message)).toEqual(message);
  });
});

describe('data: rendering (MSG-12)', () => {
  it('renders a data block: heading with the kind, description, the value as JSON, then the schema', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const [message] = render({ type: 'data', kind: 'hr', data: { name: 'Ada' }, description: 'The staff list.', schema }).messages;
    expect(message?.role).toBe('user');
    const content = message?.content ?? '';
    expect(content.split('\n')[0]).toBe('## hr');
    const order = ['The staff list.', JSON.stringify({ name: 'Ada' }), 'Schema of hr:', JSON.stringify(schema)].map((part) => content.indexOf(part));
    expect(order.every((position) => position > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('leaves out the description and schema when there are none', () => {
    const content = render({ type: 'data', kind: 'hr', data: [1] }).messages[0]?.content;
    expect(content).toBe('## hr\n[1]');
  });

  it('renders null as a value (null exists, VAR-5)', () => {
    expect(render({ type: 'data', kind: 'x', data: null }).messages[0]?.content).toMatch(/\nnull$/);
  });
});

describe('data: what it means for the data (MSG-12, VAR-12)', () => {
  const data = dataHandler.data!;

  it('belongs to the kind it names, with no kind of its own', () => {
    expect(data.kind).toBeUndefined();
    expect(data.kindOf({ type: 'data', kind: 'hr', data: 1 })).toBe('hr');
  });

  it('records a document message as a root merge and a write at its path', () => {
    expect(data.record({ type: 'data', kind: 'hr', data: 1 })).toEqual({ ok: true, record: { kind: 'hr', path: [], method: 'merge', value: 1 } });
    expect(data.record({ type: 'data', kind: 'hr', data: 1, _path: 'a[0]', _outputMethod: 'push' })).toMatchObject({
      ok: true,
      record: { path: ['a', 0], method: 'push' },
    });
  });

  it('names an unreadable write by its pointer inside the message', () => {
    expect(data.record({ type: 'data', kind: 'hr', data: 1, _path: 'a..b' })).toMatchObject({ ok: false, problem: { pointer: '/_path' } });
  });

  it("shows a kind's merged value as a data message of that kind, and nothing when nothing was written", () => {
    expect(data.show('hr', { found: true, value: [1] }, { description: 'Staff.' })).toEqual({ type: 'data', kind: 'hr', data: [1], description: 'Staff.' });
    expect(data.show('hr', { found: false }, {})).toBeUndefined();
  });
});
