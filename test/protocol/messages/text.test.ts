/** Unit tests of src/protocol/messages/text.ts: the shorthand and the rendering of text messages. */
import { describe, expect, it } from 'vitest';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('text: the shorthand (MSG-4)', () => {
  it('keeps its role and reads message or content as text', () => {
    expect(normalize({ type: 'text', role: 'system', content: 'Rules.' })).toEqual({ type: 'text', role: 'system', text: 'Rules.' });
    expect(normalize({ type: 'text', message: 'Hi.' })).toEqual({ type: 'text', text: 'Hi.' });
  });

  it('adds no role when none is written (it renders as user later, not here)', () => {
    expect(normalize({ type: 'text', text: 'Hi.' })).not.toHaveProperty('role');
  });
});

describe('text: rendering (MSG-4)', () => {
  it('renders text with its role, and with role user when none is given', () => {
    expect(render({ type: 'text', text: 'Rules.', role: 'system' }).messages).toEqual([{ role: 'system', content: 'Rules.' }]);
    expect(render({ type: 'text', text: 'Note.' }).messages).toEqual([{ role: 'user', content: 'Note.' }]);
  });
});
