/** Unit tests of src/protocol/messages/state.ts: the shorthand, the rendering and the data semantics of state messages. */
import { describe, expect, it } from 'vitest';
import { renderDataBlock } from '../../../src/protocol/messages/render-blocks.js';
import { stateHandler } from '../../../src/protocol/messages/state.js';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('state: the shorthand (MSG-6)', () => {
  it('leaves a state with nothing to fold without a state field, for validation to report', () => {
    expect(normalize({ type: 'state' })).toEqual({ type: 'state' });
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
