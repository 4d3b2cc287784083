/** Unit tests of src/protocol/messages/state.ts: the shorthand, the rendering and the data semantics of state messages. */
import { describe, expect, it } from 'vitest';
import { renderDataBlock, renderIntendedShape } from '../../../src/protocol/messages/render-blocks.js';
import { stateHandler } from '../../../src/protocol/messages/state.js';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('state: the shorthand (MSG-6)', () => {
  it('leaves a state with nothing to fold without a state field, for validation to report', () => {
    expect(normalize({ type: 'state' })).toEqual({ type: 'state' });
  });
});

describe('state: a state holding only its schema (MSG-19)', () => {
  const schema = { type: 'object', properties: { language: { type: 'string' }, isEnglish: { type: 'boolean' } } };

  it('keeps the schema beside the value, never folded into it, and has no value when nothing else is written', () => {
    expect(normalize({ type: 'state', schema })).toEqual({ type: 'state', schema });
    expect(normalize({ type: 'state', schema, language: 'fr' })).toEqual({ type: 'state', schema, state: { language: 'fr' } });
  });

  it('contributes no record, so reads find nothing rather than {} or the schema', () => {
    expect(stateHandler.data!.record({ type: 'state', schema })).toEqual({ ok: true });
  });

  it('is shown by its schema when nothing is written, and by value and schema once something is', () => {
    expect(stateHandler.data!.show('state', { found: false }, { schema })).toEqual({ type: 'state', schema });
    expect(stateHandler.data!.show('state', { found: true, value: { language: 'fr' } }, { schema })).toEqual({
      type: 'state',
      state: { language: 'fr' },
      schema,
    });
  });

  it('renders as the intended shape: no value, the references of its slots, and the schema', () => {
    const content = render({ type: 'state', schema, description: 'The flow.', _instance: 'fr' }).messages[0]?.content ?? '';
    expect(content).toBe(renderIntendedShape('state', { schema, description: 'The flow.', _instance: 'fr' }));
    const lines = content.split('\n');
    expect(lines.slice(0, 2)).toEqual(['## state (instance "fr")', 'The flow.']);
    expect(lines[2]).toMatch(/^Nothing is written to state yet\./);
    expect(lines[3]).toBe('Its slots: †state.language, †state.isEnglish');
    expect(content).toContain(JSON.stringify(schema));
    expect(content).not.toContain('{}');
  });

  it('quotes slot names that are not plain keys and leaves out those no path can write', () => {
    const odd = { type: 'object', properties: { 'two words': {}, 'a[b]': {}, ok: {} } };
    expect(renderIntendedShape('state', { schema: odd })).toContain('Its slots: †state["two words"], †state.ok\n');
  });

  it('lists no slots for a schema without top-level properties', () => {
    expect(renderIntendedShape('state', { schema: { type: 'array' } })).not.toContain('Its slots');
  });
});

describe('state: rendering (MSG-12)', () => {
  it('names the instance in the heading of an instance block', () => {
    expect(render({ type: 'state', state: { language: 'French' }, _instance: 'fr' }).messages[0]?.content.split('\n')[0]).toBe('## state (instance "fr")');
  });

  it('renders state under the kind state', () => {
    expect(render({ type: 'state', state: { count: 1 } }).messages).toEqual([{ role: 'user', content: renderDataBlock('state', { count: 1 }, {}) }]);
  });
});

describe('state: what it means for the data (MSG-12)', () => {
  const data = stateHandler.data!;

  it('always holds the kind state and records its value at the root', () => {
    expect(data.kind).toBe('state');
    expect(data.record({ type: 'state', state: { n: 0 }, _instance: 'fr' })).toEqual({
      ok: true,
      record: { kind: 'state', instance: 'fr', path: [], method: 'merge', value: { n: 0 } },
    });
  });

  it("shows a kind's merged value as a state message, and nothing when nothing was written", () => {
    expect(data.show('state', { found: true, value: { n: 1 } }, {})).toEqual({ type: 'state', state: { n: 1 } });
    expect(data.show('state', { found: false }, {})).toBeUndefined();
  });
});
