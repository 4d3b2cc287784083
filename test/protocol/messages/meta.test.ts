/** Unit tests of src/protocol/messages/meta.ts: the shorthand and the rendering of meta messages. */
import { describe, expect, it } from 'vitest';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('meta: the shorthand (MSG-6)', () => {
  it('folds every field but type into meta', () => {
    expect(normalize({ type: 'meta', name: 'doc', version: '2', schema: 'kept' })).toEqual({
      type: 'meta',
      meta: { name: 'doc', version: '2', schema: 'kept' },
    });
  });

  it('keeps a written meta field as it is', () => {
    expect(normalize({ type: 'meta', meta: { id: 'x' } })).toEqual({ type: 'meta', meta: { id: 'x' } });
  });
});

describe('meta: rendering (MSG-17)', () => {
  it('renders its value as JSON and adds an optional object property meta to the Solution schema', () => {
    const state = render({ type: 'meta', meta: { id: 'doc-7', version: '3' } });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.content).toContain(JSON.stringify({ id: 'doc-7', version: '3' }, null, 2));
    expect(state.solutionProperties.meta).toMatchObject({ type: 'object' });
  });
});
