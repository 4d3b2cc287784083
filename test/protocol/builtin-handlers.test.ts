/** Unit tests of src/protocol/messages/builtin-handlers.ts: the registry of built-in handlers (MSG-1) and what holds for all of them (each type's own tests: messages/). */
import { describe, expect, it } from 'vitest';
import { builtinHandlers, defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { isDataMessage } from '../../src/protocol/messages/data-messages.js';
import type { MessageHandler } from '../../src/protocol/messages/handlers.js';
import type { Message } from '../../src/protocol/types.js';
import { builtins as handlers, normalize, render } from '../helpers/builtin-messages.js';

describe('the built-in registry (MSG-1)', () => {
  it('has exactly one handler for each built-in type', () => {
    expect(handlers.types()).toEqual([
      'advisor',
      'assistant',
      'data',
      'error',
      'input',
      'meta',
      'plan',
      'state',
      'system',
      'text',
      'tool',
      'toolset',
      'user',
      'workers',
    ]);
    expect(builtinHandlers()).toHaveLength(14);
  });

  it('gives every built-in handler a schema, so documents are validated against it', () => {
    for (const handler of builtinHandlers()) expect(handler.schema, handler.type).toBeDefined();
  });

  it('lets a registration replace the handler of a type', () => {
    const registry = defaultHandlers();
    const replacement: MessageHandler = { type: 'user' };
    registry.register(replacement);
    expect(registry.get('user')).toBe(replacement);
    expect(registry.types()).toHaveLength(14);
  });

  it('treats data, input and state as data-like, and nothing else', () => {
    const dataLike = ['data', 'input', 'state'];
    for (const type of handlers.types()) expect(isDataMessage({ type }, handlers), type).toBe(dataLike.includes(type));
  });
});

describe('what renders into the Solution and the configuration (MSG-17, ADV-5)', () => {
  it('is done by meta and advisor messages only: no other built-in message adds a Solution property or changes the configuration', () => {
    const messages: Message[] = [
      { type: 'user', text: 'x' },
      { type: 'text', text: 'x' },
      { type: 'data', kind: 'k', data: 1 },
      { type: 'input', input: 1 },
      { type: 'state', state: 1 },
      { type: 'tool', tool: {} },
      { type: 'plan', mode: 'lazy', calls: [] },
      { type: 'error', call: {}, error: { code: 'c', message: 'm' } },
    ];
    for (const message of messages) {
      const state = render(message);
      expect(state.solutionProperties, message.type).toEqual({});
      expect(state.config, message.type).toEqual({ temperature: 0 });
    }
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
