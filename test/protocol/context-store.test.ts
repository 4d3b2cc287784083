/** Unit tests of src/protocol/context/context-store.ts: the run's growing context, its data records, tools and instances. */
import { describe, expect, it } from 'vitest';
import { ContextStore, MAX_DATA_DEPTH } from '../../src/protocol/context/context-store.js';
import { CallError } from '../../src/protocol/errors.js';
import { MAX_NESTING_DEPTH } from '../../src/protocol/json.js';
import type { Message } from '../../src/protocol/types.js';
import { makeWrite } from '../../src/protocol/variables/data-records.js';
import { instanceNames } from '../../src/protocol/messages/data-messages.js';
import { parseReference, type Reference } from '../../src/protocol/variables/references.js';

const ref = (text: string) => parseReference(text) as Reference;

describe('ContextStore', () => {
  it('keeps the messages it is built with, in order', () => {
    const messages: Message[] = [
      { type: 'user', text: 'a' },
      { type: 'state', state: { n: 1 } },
    ];
    expect(new ContextStore(messages).messages).toEqual(messages);
  });

  it('keeps a record for each data-like message with a value, and none for a template slot or other messages', () => {
    const store = new ContextStore([
      { type: 'user', text: 'a' },
      { type: 'input', schema: { type: 'object' } },
      { type: 'input', input: { x: 1 } },
      { type: 'state', state: { n: 1 } },
      { type: 'data', kind: 'hr', data: [] },
      { type: 'tool', tool: {} },
    ]);
    expect(store.records.map((record) => record.kind)).toEqual(['input', 'state', 'hr']);
  });

  it('appends without changing earlier messages (VAR-12)', () => {
    const first: Message = { type: 'state', state: { n: 1 } };
    const store = new ContextStore([first]);
    store.append(makeWrite(ref('†state.n'), 2, { call: '0.0' }));
    expect(first).toEqual({ type: 'state', state: { n: 1 } });
    expect(store.messages).toHaveLength(2);
    expect(store.view('state', undefined)).toEqual({ found: true, value: { n: 2 } });
  });

  it('reads a reference for an instance: global data plus that instance only (DATA-3)', () => {
    const store = new ContextStore([
      { type: 'state', state: { glossary: 'g', language: 'none' } },
      { type: 'state', _instance: 'fr', state: { language: 'French' } },
      { type: 'state', _instance: 'de', state: { language: 'German' } },
    ]);
    expect(store.read(ref('†state.language'), 'fr')).toEqual({ found: true, value: 'French' });
    expect(store.read(ref('†state.language'), undefined)).toEqual({ found: true, value: 'none' });
    expect(store.read(ref('†state.glossary'), 'de')).toEqual({ found: true, value: 'g' });
    expect(store.read(ref('†state.missing'), 'fr')).toEqual({ found: false });
  });

  it('finds null as a value (VAR-5)', () => {
    const store = new ContextStore([{ type: 'data', kind: 'k', data: { v: null } }]);
    expect(store.read(ref('†k.v'), undefined)).toEqual({ found: true, value: null });
  });

  it('views a kind that does not exist as not found', () => {
    expect(new ContextStore().view('state', undefined)).toEqual({ found: false });
  });

  it('collects tools as messages arrive, the last definition winning and moving to the end (TOOL-4)', () => {
    const store = new ContextStore([{ type: 'tool', tool: { a: { type: 'object' }, b: { type: 'object' } } }]);
    store.append({ type: 'tool', tool: { a: { type: 'object', description: 'new' } } });
    expect([...store.tools.keys()]).toEqual(['b', 'a']);
    expect(store.tools.get('a')?.description).toBe('new');
  });

  it('lists every instance named in the context, in messages or in writes, sorted and once (DATA-6)', () => {
    const store = new ContextStore([
      { type: 'state', _instance: 'fr', state: {} },
      { type: 'input', _instance: 'de', schema: true },
    ]);
    store.append(makeWrite(ref('†output.x'), 1, { instance: 'at' }));
    store.append(makeWrite(ref('†output.y'), 1, { instance: 'fr' }));
    expect(store.instances()).toEqual(['at', 'de', 'fr']);
    expect(new ContextStore([{ type: 'user', text: 'x' }]).instances()).toEqual([]);
  });

  it('keeps its instances as messages that name one are replaced and removed (DATA-1)', () => {
    const plan = (instance: string, calls: number): Message => ({ type: 'plan', mode: 'eager', calls: Array(calls).fill({ _tool: 't' }), _instance: instance });
    const first = plan('fr', 1);
    const store = new ContextStore([first, { type: 'state', _instance: 'de', state: {} }]);
    const seen = () => [store.instances(), instanceNames(store.messages)];
    expect(store.instances()).toEqual(['de', 'fr']);
    const second = plan('it', 1);
    store.replace(first, second);
    expect(seen()).toEqual([
      ['de', 'it'],
      ['de', 'it'],
    ]);
    store.replace(first, plan('it', 2));
    store.remove((message) => message === second);
    expect(seen()).toEqual([
      ['de', 'it'],
      ['de', 'it'],
    ]);
    store.remove((message) => message.type === 'plan' || message.type === 'state');
    expect(seen()).toEqual([['de'], ['de']]);
    store.instances().push('changed by a caller');
    expect(store.instances()).toEqual(['de']);
  });

  it('reports every record appended to its watchers, until they stop watching, and counts records by kind', () => {
    const store = new ContextStore([{ type: 'state', state: { n: 1 } }]);
    const seen: string[] = [];
    const stop = store.watch((record) => seen.push(`${record.kind} ${record.path.join('.')} ${record.instance ?? '-'}`));
    store.append({ type: 'user', text: 'no record' });
    store.append(makeWrite(ref('†output.a'), 1, { instance: 'fr' }));
    stop();
    store.append(makeWrite(ref('†output.b'), 2));
    expect(seen).toEqual(['output a fr']);
    expect([store.count('output'), store.count('state'), store.count('input')]).toEqual([2, 1, 0]);
  });
});

describe('ContextStore: how deep data may nest (DOC-10)', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < levels; level++) value = { a: value };
    return value;
  };

  it('accepts a write whose path and value reach MAX_DATA_DEPTH levels', () => {
    const store = new ContextStore();
    const path = `†state${'.p'.repeat(MAX_NESTING_DEPTH)}`;
    store.append(makeWrite(ref(path), nested(MAX_DATA_DEPTH - MAX_NESTING_DEPTH)));
    expect(store.read(ref(path), undefined).found).toBe(true);
  });

  it('refuses a write that would nest deeper, naming where, and keeps the context as it was', () => {
    const store = new ContextStore();
    const write = makeWrite(ref('†state.x.y'), nested(MAX_DATA_DEPTH - 1));
    let thrown: unknown;
    try {
      store.append(write);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CallError);
    expect((thrown as CallError).code).toBe('invalid_params');
    expect((thrown as CallError).message).toContain('†state.x.y');
    expect((thrown as CallError).message).toContain(`deeper than ${MAX_DATA_DEPTH} levels`);
    expect(store.messages).toEqual([]);
    expect(store.view('state', undefined)).toEqual({ found: false });
  });

  it('refuses a value that contains itself instead of walking it forever', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => new ContextStore().append(makeWrite(ref('†state.x'), cyclic))).toThrow(/deeper than/);
  });

  it('counts the array a push adds to as a level', () => {
    const store = new ContextStore();
    expect(() => store.append(makeWrite(ref('†state.list'), nested(MAX_DATA_DEPTH - 1), { method: 'push' }))).toThrow(CallError);
    store.append(makeWrite(ref('†state.list'), nested(MAX_DATA_DEPTH - 2), { method: 'push' }));
    expect(store.count('state')).toBe(1);
  });
});
