/** Unit tests of src/protocol/context/scopes.ts: what parent context a call's `_scopes` allow (SCOPE-1 to SCOPE-7). */
import { describe, expect, it } from 'vitest';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import { CallError } from '../../src/protocol/errors.js';
import { parseScope, scopeContext } from '../../src/protocol/context/scopes.js';
import type { Message } from '../../src/protocol/types.js';

const context: Message[] = [
  { type: 'system', text: 'You are the parent.' },
  { type: 'text', text: 'System rule as text.', role: 'system' },
  { type: 'user', text: 'Hello.' },
  { type: 'assistant', text: 'Hi.' },
  { type: 'text', text: 'A note.' },
  { type: 'tool', tool: { lookup: { type: 'object' } } },
  { type: 'input', input: { topic: 'billing' }, schema: { type: 'object' }, description: 'What to discuss.' },
  { type: 'state', state: { user: { name: 'Ada', role: 'admin' }, notes: ['n1', 'n2'] }, description: 'Old description.' },
  { type: 'state', state: { user: { team: 'core' } }, description: 'Working state.', schema: { type: 'object', title: 'state' } },
  { type: 'data', kind: 'hr', data: { items: [{ id: 1 }, { id: 2 }] } },
  { type: 'data', kind: 'secret', data: 'CONFIDENTIAL' },
  { type: 'state', _instance: 'fr', state: { language: 'French' } },
  { type: 'state', _instance: 'de', state: { language: 'German' } },
  { type: 'plan', mode: 'eager', calls: [{ _tool: 'lookup' }] },
  { type: 'error', call: { _tool: 'lookup' }, error: { code: 'x', message: 'y' } },
];
const store = new ContextStore(context);

describe('parseScope (SCOPE-1)', () => {
  it('parses a kind, optionally narrowed by a path written like a reference without its sigil', () => {
    expect(parseScope('state')).toEqual({ kind: 'state', segments: [], path: '' });
    expect(parseScope('state.user')).toMatchObject({ kind: 'state', segments: ['user'] });
    expect(parseScope('hr.items[0]')).toMatchObject({ kind: 'hr', segments: ['items', 0] });
    expect(parseScope('state["odd key"]')).toMatchObject({ kind: 'state', segments: ['odd key'] });
  });

  it.each(['', '†state', 'state..x', '1state', 'state.', 'state[01]', 'state x'])('refuses %j with invalid_params', (scope) => {
    let caught: unknown;
    try {
      parseScope(scope);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CallError);
    expect(caught).toMatchObject({ code: 'invalid_params', message: expect.stringContaining(JSON.stringify(scope)) });
  });
});

describe('scopeContext: nothing unscoped (SCOPE-5, SCOPE-6)', () => {
  it('returns nothing without scopes, or with an empty list', () => {
    expect(scopeContext(store, undefined, undefined)).toEqual([]);
    expect(scopeContext(store, [], undefined)).toEqual([]);
  });

  it('returns only what the scopes name: no other kind, no plan, no error', () => {
    const text = JSON.stringify(scopeContext(store, ['system', 'history', 'tool', 'input', 'state', 'hr'], undefined));
    expect(text).not.toContain('CONFIDENTIAL');
    expect(text).not.toContain('"plan"');
    expect(text).not.toContain('"error"');
  });

  it('contributes nothing for a scope whose data does not exist', () => {
    expect(scopeContext(store, ['missing', 'state.nobody', 'hr.items[9]'], undefined)).toEqual([]);
  });

  it('lists the contributions in the order the scopes are listed', () => {
    const types = scopeContext(store, ['hr', 'tool', 'input'], undefined).map((message) => message.type);
    expect(types).toEqual(['data', 'tool', 'input']);
  });
});

describe('scopeContext: turn scopes (SCOPE-4)', () => {
  it('gives system turns and system-role text for system', () => {
    expect(scopeContext(store, ['system'], undefined)).toEqual([context[0], context[1]]);
  });

  it('gives user and assistant turns and the other text for history, in context order', () => {
    expect(scopeContext(store, ['history'], undefined)).toEqual([context[2], context[3], context[4]]);
  });

  it('gives the tool messages for tool', () => {
    expect(scopeContext(store, ['tool'], undefined)).toEqual([context[5]]);
  });
});

describe('scopeContext: data scopes (SCOPE-3, DATA-2)', () => {
  it('gives one message holding the merged value of a kind, with its latest description and schema', () => {
    expect(scopeContext(store, ['state'], undefined)).toEqual([
      {
        type: 'state',
        state: { user: { name: 'Ada', role: 'admin', team: 'core' }, notes: ['n1', 'n2'] },
        description: 'Working state.',
        schema: { type: 'object', title: 'state' },
      },
    ]);
  });

  it('gives input and other data kinds in their own canonical shape', () => {
    expect(scopeContext(store, ['input'], undefined)).toEqual([
      { type: 'input', input: { topic: 'billing' }, description: 'What to discuss.', schema: { type: 'object' } },
    ]);
    expect(scopeContext(store, ['hr'], undefined)).toEqual([{ type: 'data', kind: 'hr', data: { items: [{ id: 1 }, { id: 2 }] } }]);
  });

  it('keeps a narrowed scope in place, holding only the value at its path, without the whole-kind schema', () => {
    expect(scopeContext(store, ['state.user.name'], undefined)).toEqual([{ type: 'state', state: { user: { name: 'Ada' } }, description: 'Working state.' }]);
  });

  it('keeps an index in place as an array position', () => {
    const [message] = scopeContext(store, ['hr.items[1]'], undefined);
    expect(message).toMatchObject({ type: 'data', kind: 'hr' });
    const items = (message!.data as { items: unknown[] }).items;
    expect(Array.isArray(items)).toBe(true);
    expect(items[1]).toEqual({ id: 2 });
    expect(items[0]).toBeUndefined();
  });

  it('includes writes made by calls in the merged value', () => {
    const live = new ContextStore(context);
    live.append({ type: 'data', kind: 'state', data: 'guest', _path: 'user.role', _outputMethod: 'set', _call: '0.0' });
    expect(scopeContext(live, ['state.user'], undefined)).toEqual([
      { type: 'state', state: { user: { name: 'Ada', role: 'guest', team: 'core' } }, description: 'Working state.' },
    ]);
  });

  it('gives a bad scope name the invalid_params error of parseScope (SCOPE-1)', () => {
    expect(() => scopeContext(store, ['state..x'], undefined)).toThrow(CallError);
  });
});

describe('scopeContext: instances (SCOPE-7, DATA-3, DATA-5)', () => {
  it("gives a call on an instance the global data plus that instance's own", () => {
    const [message] = scopeContext(store, ['state'], 'fr');
    expect(message?.state).toEqual({ user: { name: 'Ada', role: 'admin', team: 'core' }, notes: ['n1', 'n2'], language: 'French' });
  });

  it('never gives one instance what another holds, nor a call without an instance', () => {
    expect(JSON.stringify(scopeContext(store, ['state'], 'fr'))).not.toContain('German');
    expect(JSON.stringify(scopeContext(store, ['state'], undefined))).not.toMatch(/French|German/);
  });

  it('narrows an instance view like a global one', () => {
    expect(scopeContext(store, ['state.language'], 'de')).toEqual([{ type: 'state', state: { language: 'German' }, description: 'Working state.' }]);
    expect(scopeContext(store, ['state.language'], undefined)).toEqual([]);
  });

  it("takes the latest description from the instance's own messages too, never another instance's", () => {
    const live = new ContextStore([
      { type: 'state', state: { a: 1 }, description: 'global' },
      { type: 'state', _instance: 'fr', state: { b: 2 }, description: 'french' },
      { type: 'state', _instance: 'de', state: { c: 3 }, description: 'german' },
    ]);
    expect(scopeContext(live, ['state'], 'fr')[0]?.description).toBe('french');
    expect(scopeContext(live, ['state'], undefined)[0]?.description).toBe('global');
  });

  it("takes the newest description and schema whether global or the instance's own, as messages keep arriving", () => {
    const live = new ContextStore([
      { type: 'state', _instance: 'fr', state: { b: 2 }, description: 'french', schema: { type: 'object', title: 'fr' } },
      { type: 'state', state: { a: 1 }, description: 'global' },
    ]);
    expect(scopeContext(live, ['state'], 'fr')[0]).toMatchObject({ description: 'global', schema: { title: 'fr' } });
    live.append({ type: 'state', _instance: 'fr', state: { c: 3 }, description: 'french again' });
    live.append({ type: 'state', state: {}, schema: { type: 'object', title: 'global' } });
    expect(scopeContext(live, ['state'], 'fr')[0]).toMatchObject({ state: { a: 1, b: 2, c: 3 }, description: 'french again', schema: { title: 'global' } });
    expect(scopeContext(live, ['state'], undefined)[0]).toMatchObject({ state: { a: 1 }, description: 'global', schema: { title: 'global' } });
  });
});
