/** Unit tests of src/protocol/messages/turn.ts: the chat form, the shorthand and the rendering of system, user and assistant turns. */
import { describe, expect, it } from 'vitest';
import { hasStructuredContent, normalizeTurn, unwrapContent, withType } from '../../../src/protocol/messages/turn.js';
import { normalize, render } from '../../helpers/builtin-messages.js';

describe('withType (MSG-2)', () => {
  it.each(['system', 'user', 'assistant'])('gives a chat-style message with role %s that role as its type', (role) => {
    expect(withType({ role, content: 'hi' })).toEqual({ role, content: 'hi', type: role });
  });

  it('leaves a message that has a type alone, even when its role differs', () => {
    const message = { type: 'text', role: 'system', text: 'x' };
    expect(withType(message)).toBe(message);
  });

  it('gives no type to a role that is not a turn', () => {
    expect(withType({ role: 'tool', content: 'x' })).toEqual({ role: 'tool', content: 'x' });
  });
});

describe('turns: the shorthand (MSG-3)', () => {
  it.each(['system', 'user', 'assistant'])('keeps the canonical %s turn as it is', (type) => {
    expect(normalize({ type, text: 'Hello.' })).toEqual({ type, text: 'Hello.' });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['message', { type: 'user', message: 'Hello.' }, 'user'],
    ['content', { type: 'system', content: 'Hello.' }, 'system'],
    ['chat form {role, content}', { role: 'assistant', content: 'Hello.' }, 'assistant'],
  ])('reads the text of a turn written with %s, and drops that field', (_form, message, type) => {
    expect(normalize(message)).toEqual({ type, text: 'Hello.' });
  });

  it('prefers text over message over content when several are written', () => {
    expect(normalizeTurn({ type: 'user', text: 'a', message: 'b', content: 'c' })).toEqual({ type: 'user', text: 'a' });
    expect(normalizeTurn({ type: 'user', message: 'b', content: 'c' })).toEqual({ type: 'user', text: 'b' });
  });

  it('leaves a turn without any text without text, for validation to report', () => {
    expect(normalize({ type: 'user' }).text).toBeUndefined();
  });
});

describe('turns: rendering (MSG-11)', () => {
  it.each(['system', 'user', 'assistant'] as const)('renders a %s turn as one message of that role with its text unchanged', (type) => {
    const text = '  Keep *this* exactly.\n';
    expect(render({ type, text }).messages).toEqual([{ role: type, content: text }]);
  });
});

describe('turns whose content is a message (MSG-20)', () => {
  it('recognises an object content of a turn that gives no text otherwise', () => {
    expect(hasStructuredContent(withType({ role: 'user', content: { type: 'input' } }))).toBe(true);
    expect(hasStructuredContent({ type: 'user', content: { type: 'input' } })).toBe(true);
    expect(hasStructuredContent({ type: 'user', content: 'text' })).toBe(false);
    expect(hasStructuredContent({ type: 'user', text: 'a', content: { type: 'input' } })).toBe(false);
    expect(hasStructuredContent({ type: 'text', content: { type: 'input' } })).toBe(false);
    expect(hasStructuredContent({ role: 'tool', content: { type: 'input' } })).toBe(false);
  });

  it('gives a text content without a role the turn role, and keeps other content as written', () => {
    expect(unwrapContent({ type: 'assistant', content: { type: 'text', text: 'x' } })).toEqual({
      ok: true,
      message: { type: 'text', text: 'x', role: 'assistant' },
    });
    const input = { type: 'input', city: 'Paris' };
    expect(unwrapContent({ type: 'user', role: 'user', content: input })).toEqual({ ok: true, message: input });
  });
});
