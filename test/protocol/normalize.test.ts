/** Unit tests of src/protocol/normalize.ts: every shorthand of every built-in message type (MSG-2 to MSG-8) and of tools (TOOL-3). */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/builtin-handlers.js';
import { normalizeTurn, withType } from '../../src/protocol/messages/turn.js';
import { normalizeTool } from '../../src/protocol/normalize.js';
import type { ToolSchema } from '../../src/protocol/types.js';

const handlers = defaultHandlers();

const normalize = (message: Record<string, unknown>): Record<string, unknown> => {
  const typed = { ...withType(message), type: String(withType(message).type) };
  const normalizer = handlers.get(typed.type)?.normalize;
  if (!normalizer) throw new Error(`no normalizer for ${typed.type}`);
  return normalizer(typed);
};

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

describe('turns (MSG-3)', () => {
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

describe('text (MSG-4)', () => {
  it('keeps its role and reads message or content as text', () => {
    expect(normalize({ type: 'text', role: 'system', content: 'Rules.' })).toEqual({ type: 'text', role: 'system', text: 'Rules.' });
    expect(normalize({ type: 'text', message: 'Hi.' })).toEqual({ type: 'text', text: 'Hi.' });
  });

  it('adds no role when none is written (it renders as user later, not here)', () => {
    expect(normalize({ type: 'text', text: 'Hi.' })).not.toHaveProperty('role');
  });
});

describe('data (MSG-5)', () => {
  it('takes the kind "data" when kind is omitted', () => {
    expect(normalize({ type: 'data', data: { a: 1 } })).toEqual({ type: 'data', kind: 'data', data: { a: 1 } });
  });

  it('keeps a written kind and every other field', () => {
    const message = { type: 'data', kind: 'hr', data: [], schema: { type: 'array' }, description: 'Staff.', _instance: 'fr' };
    expect(normalize(message)).toEqual(message);
  });
});

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

describe('input template slots (MSG-6, DOC-6)', () => {
  it('leaves an input with nothing to fold without an input field: a template slot', () => {
    const slot = normalize({ type: 'input', schema: { type: 'object' }, description: 'What to greet.' });
    expect(slot).toEqual({ type: 'input', schema: { type: 'object' }, description: 'What to greet.' });
    expect('input' in slot).toBe(false);
  });

  it('leaves a state with nothing to fold without a state field, for validation to report', () => {
    expect(normalize({ type: 'state' })).toEqual({ type: 'state' });
  });
});

describe('meta (MSG-6)', () => {
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

describe('plan (MSG-7)', () => {
  it('defaults mode to eager and calls to []', () => {
    expect(normalize({ type: 'plan' })).toEqual({ type: 'plan', mode: 'eager', calls: [] });
  });

  it('keeps a written mode and calls', () => {
    const calls = [{ _tool: 'a' }];
    expect(normalize({ type: 'plan', mode: 'lazy', calls })).toEqual({ type: 'plan', mode: 'lazy', calls });
  });
});

describe('tool messages (TOOL-3)', () => {
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

describe('error (MSG-8)', () => {
  it('has no shorthand: the built-in normalizers do not touch it', () => {
    expect(handlers.get('error')?.normalize).toBeUndefined();
  });
});

describe('normalizeTool (TOOL-1, TOOL-3)', () => {
  it.each(['_delegate', '_activity', '_resolve', '_approval'])('moves a top-level %s value into properties as a const', (key) => {
    expect(normalizeTool({ [key]: 'value' })).toEqual({ type: 'object', properties: { [key]: { const: 'value' } } });
  });

  it('moves top-level _scopes into properties as a const, even though the value is an array', () => {
    expect(normalizeTool({ _scopes: ['state', 'input'] })).toEqual({ type: 'object', properties: { _scopes: { const: ['state', 'input'] } } });
  });

  it('wraps an object value in const too: a wider schema must be written inside properties', () => {
    expect(normalizeTool({ _delegate: { enum: ['a.json'] } })).toEqual({ type: 'object', properties: { _delegate: { const: { enum: ['a.json'] } } } });
  });

  it('moves a top-level _output schema to properties._output as it is (not as a const)', () => {
    const output = { type: 'object', required: ['go'] };
    expect(normalizeTool({ _output: output })).toEqual({ type: 'object', properties: { _output: output } });
  });

  it('makes type object explicit and keeps a different type for validation to name', () => {
    expect(normalizeTool({})).toEqual({ type: 'object', properties: {} });
    expect(normalizeTool({ type: 'string' } as unknown as ToolSchema).type).toBe('string');
  });

  it('keeps parameters, description, required and other keywords', () => {
    const tool: ToolSchema = {
      description: 'Weather.',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
      _scopes: ['input'],
    };
    expect(normalizeTool(tool)).toEqual({
      type: 'object',
      description: 'Weather.',
      properties: { city: { type: 'string' }, _scopes: { const: ['input'] } },
      required: ['city'],
      additionalProperties: false,
    });
  });

  it('keeps a chosen meta-property already declared inside properties', () => {
    const tool: ToolSchema = { type: 'object', properties: { _scopes: { type: 'array', items: { enum: ['state'] } } } };
    expect(normalizeTool(tool)).toEqual(tool);
  });

  it('does not mutate the tool it is given', () => {
    const tool: ToolSchema = { _delegate: './a.json', _output: true, properties: { x: { type: 'string' } } };
    const copy = structuredClone(tool);
    normalizeTool(tool);
    expect(tool).toEqual(copy);
  });
});

describe('keys named __proto__ (TOOL-1, DATA-2)', () => {
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

  it('keeps a __proto__ keyword of a tool schema as a keyword, for the schema compiler to judge', () => {
    const tool = normalizeTool(JSON.parse('{"description":"d","__proto__":{"x":1}}'));
    expect(Object.getPrototypeOf(tool)).toBe(Object.prototype);
    expect(Object.keys(tool)).toEqual(['type', 'description', '__proto__', 'properties']);
  });
});

describe('idempotence on canonical forms (DOC-8)', () => {
  const canonical: Record<string, unknown>[] = [
    { type: 'system', text: 'Be brief.' },
    { type: 'user', text: 'Hi.' },
    { type: 'assistant', text: 'Hello.' },
    { type: 'text', text: 'Rules.', role: 'system' },
    { type: 'text', text: 'Note.' },
    { type: 'data', kind: 'hr', data: { a: 1 }, schema: { type: 'object' }, description: 'd', _instance: 'fr' },
    { type: 'data', kind: 'state', data: 2, _path: 'count', _outputMethod: 'set', _call: '0.0', _date: '2026-01-01T00:00:00.000Z' },
    { type: 'input', input: { name: 'Ada' }, schema: { type: 'object' } },
    { type: 'input', schema: { type: 'object' } },
    { type: 'state', state: { count: 1 }, _instance: 'de' },
    { type: 'tool', tool: { t: { type: 'object', properties: { _delegate: { const: 'a.json' }, _output: { type: 'string' }, x: { type: 'string' } } } } },
    { type: 'plan', mode: 'lazy', calls: [{ _tool: 't', x: '†input.name' }] },
    { type: 'meta', meta: { version: '1' } },
  ];

  it.each(canonical.map((message) => [message.type, message] as const))('leaves a canonical %s message unchanged', (_type, message) => {
    expect(normalize(message)).toEqual(message);
  });

  const shorthands: Record<string, unknown>[] = [
    { role: 'user', content: 'Hi.' },
    { type: 'system', message: 'Be brief.' },
    { type: 'text', content: 'x', role: 'assistant' },
    { type: 'data', data: 1 },
    { type: 'input', name: 'Ada', schema: { type: 'object' } },
    { type: 'state', count: 1 },
    { type: 'meta', version: '1' },
    { type: 'plan' },
    { type: 'tool', tool: { t: { _delegate: 'a.json', _scopes: ['state'], _output: { type: 'string' } } } },
  ];

  it.each(shorthands.map((message) => [JSON.stringify(message), message] as const))('normalises %s to a form that normalises to itself', (_text, message) => {
    const once = normalize(message);
    expect(normalize(once)).toEqual(once);
  });
});
