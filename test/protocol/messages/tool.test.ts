/** Unit tests of src/protocol/messages/tool.ts: the shorthand of tool messages, which render no text (their load checks: load-request.test.ts). */
import { describe, expect, it } from 'vitest';
import { freshState, normalize, render } from '../../helpers/builtin-messages.js';

describe('tool: the shorthand (TOOL-3)', () => {
  it('normalises each tool of the message', () => {
    const message = normalize({ type: 'tool', tool: { a: { _delegate: './a.json' }, b: { properties: { x: { type: 'string' } } } } });
    expect(message).toEqual({
      type: 'tool',
      tool: {
        a: { type: 'object', properties: { _delegate: { const: './a.json' } } },
        b: { type: 'object', properties: { x: { type: 'string' } } },
      },
    });
  });

  it('keeps a tool named __proto__ as an entry of the message, so validation can report it', () => {
    const message = normalize(JSON.parse('{"type":"tool","tool":{"__proto__":{"_delegate":"./a.json"}}}')) as { tool: object };
    expect(Object.getPrototypeOf(message.tool)).toBe(Object.prototype);
    expect(Object.entries(message.tool)).toEqual([['__proto__', { type: 'object', properties: { _delegate: { const: './a.json' } } }]]);
  });

  it('leaves a tool field that is not an object for validation to report', () => {
    expect(normalize({ type: 'tool', tool: ['a'] })).toEqual({ type: 'tool', tool: ['a'] });
    expect(normalize({ type: 'tool', tool: { a: 'not a schema' } })).toEqual({ type: 'tool', tool: { a: 'not a schema' } });
  });
});

describe('tool: rendering (MSG-14)', () => {
  it('renders no text: tools reach the model through the Solution schema only', () => {
    const state = render({ type: 'tool', tool: { t: { type: 'object', description: 'SECRET-DESCRIPTION' } } });
    expect(state).toEqual(freshState());
  });
});
