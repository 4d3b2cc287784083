/** Unit tests of data records: the writes data-like messages hold, folded into the values reads see. */
import { describe, expect, it, vi } from 'vitest';
import { applyWrite, foldRecords, makeWrite, readAt, readPath, viewOf, visibleRecords, type DataRecord } from '../../src/protocol/variables/data-records.js';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { recordOf } from '../../src/protocol/messages/data-messages.js';
import { parseReference, type PathSegment, type Reference } from '../../src/protocol/variables/references.js';
import type { OutputMethod } from '../../src/protocol/types.js';

const ref = (text: string): Reference => {
  const parsed = parseReference(text);
  if (!parsed) throw new Error(`test reference ${text} does not parse`);
  return parsed;
};

const write = (kind: string, path: PathSegment[], method: OutputMethod, value: unknown, instance?: string): DataRecord => ({
  kind,
  path,
  method,
  value,
  ...(instance !== undefined ? { instance } : {}),
});

describe('makeWrite', () => {
  it('builds the append-only write message of a reference', () => {
    expect(makeWrite(ref('†state.items[0].name'), 'x', { method: 'merge', call: 'c1', instance: 'i1', date: 'D' })).toEqual({
      type: 'data',
      kind: 'state',
      data: 'x',
      _path: 'items[0].name',
      _outputMethod: 'merge',
      _call: 'c1',
      _date: 'D',
      _instance: 'i1',
    });
  });

  it('defaults to set, now, and no instance', () => {
    const message = makeWrite(ref('†output'), { done: true });
    expect(message).toMatchObject({ type: 'data', kind: 'output', _path: '', _outputMethod: 'set' });
    expect(Number.isNaN(Date.parse(message._date!))).toBe(false);
    expect('_instance' in message).toBe(false);
    expect('_call' in message).toBe(false);
  });

  it('round-trips through recordOf', () => {
    const record = recordOf(makeWrite(ref('†state["x y"][2]'), 5, { method: 'concat', date: 'D' }), defaultHandlers());
    expect(record).toEqual({ kind: 'state', path: ['x y', 2], method: 'concat', value: 5, date: 'D' });
  });
});

describe('applyWrite', () => {
  it('set replaces the value at the path', () => {
    expect(applyWrite({ a: { b: 1, c: 2 } }, ['a'], 'set', { d: 3 })).toEqual({ a: { d: 3 } });
    expect(applyWrite({ a: 1 }, [], 'set', 5)).toBe(5);
  });

  it('merge deep-merges objects, and arrays and primitives replace', () => {
    expect(applyWrite({ a: { b: { c: 1, d: [1] }, e: 1 } }, ['a'], 'merge', { b: { d: [2], f: 3 } })).toEqual({ a: { b: { c: 1, d: [2], f: 3 }, e: 1 } });
    expect(applyWrite({ a: 5 }, ['a'], 'merge', { x: 1 })).toEqual({ a: { x: 1 } });
    expect(applyWrite({ a: { x: 1 } }, ['a'], 'merge', 7)).toEqual({ a: 7 });
    expect(applyWrite({ a: { x: 1 } }, ['a'], 'merge', null)).toEqual({ a: null });
  });

  it('assign shallow-assigns into an object and replaces anything else', () => {
    expect(applyWrite({ a: { b: { c: 1 }, e: 1 } }, ['a'], 'assign', { b: { d: 2 } })).toEqual({ a: { b: { d: 2 }, e: 1 } });
    expect(applyWrite({ a: [1] }, ['a'], 'assign', { x: 1 })).toEqual({ a: { x: 1 } });
    expect(applyWrite({ a: { x: 1 } }, ['a'], 'assign', [1])).toEqual({ a: [1] });
  });

  it('push appends the value as one element', () => {
    expect(applyWrite({ items: [1] }, ['items'], 'push', [2, 3])).toEqual({ items: [1, [2, 3]] });
    expect(applyWrite(undefined, ['items'], 'push', 1)).toEqual({ items: [1] });
    expect(applyWrite({ items: 'x' }, ['items'], 'push', 1)).toEqual({ items: [1] });
  });

  it('concat appends the elements of an array, or a single value', () => {
    expect(applyWrite({ items: [1] }, ['items'], 'concat', [2, 3])).toEqual({ items: [1, 2, 3] });
    expect(applyWrite({ items: [1] }, ['items'], 'concat', 2)).toEqual({ items: [1, 2] });
    expect(applyWrite(undefined, ['items'], 'concat', [1, 2])).toEqual({ items: [1, 2] });
    expect(applyWrite({ items: { a: 1 } }, ['items'], 'concat', [1])).toEqual({ items: [1] });
  });

  it('creates missing objects, and arrays where the segment is a number, padding gaps with null', () => {
    expect(applyWrite(undefined, ['a', 'b'], 'set', 1)).toEqual({ a: { b: 1 } });
    expect(applyWrite(undefined, ['items', 2, 'id'], 'set', 'x')).toEqual({ items: [null, null, { id: 'x' }] });
    expect(applyWrite({ a: 5 }, ['a', 'b'], 'set', 1)).toEqual({ a: { b: 1 } });
  });

  it('keeps the kind of an existing container', () => {
    expect(applyWrite({ a: { k: 1 } }, ['a', 0], 'set', 'v')).toEqual({ a: { k: 1, 0: 'v' } });
    expect(applyWrite({ a: ['x', 'y'] }, ['a', 'k'], 'set', 'v')).toEqual({ a: { 0: 'x', 1: 'y', k: 'v' } });
    expect(applyWrite({ a: ['x', 'y'] }, ['a', '1'], 'set', 'v')).toEqual({ a: ['x', 'v'] });
  });

  it('never mutates its input', () => {
    const state = { a: { b: [1], c: { d: 1 } } };
    const before = structuredClone(state);
    for (const method of ['set', 'merge', 'assign', 'push', 'concat'] as const) {
      applyWrite(state, ['a', 'b'], method, [2]);
      applyWrite(state, ['a', 'c'], method, { e: 2 });
      applyWrite(state, [], method, { a: 1 });
    }
    expect(state).toEqual(before);
  });

  it('writes a __proto__ key as an own key without touching prototypes', () => {
    const result = applyWrite({}, ['__proto__', 'polluted'], 'set', true) as Record<string, unknown>;
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const merged = applyWrite({}, [], 'merge', JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('readAt', () => {
  it('reads keys and indices and tells missing from null', () => {
    const value = { a: [{ b: null }], c: 'text' };
    expect(readAt(value, ['a', 0, 'b'])).toEqual({ found: true, value: null });
    expect(readAt(value, ['a', 1])).toEqual({ found: false });
    expect(readAt(value, ['c', 0])).toEqual({ found: false });
    expect(readAt(value, ['a', 'length'])).toEqual({ found: false });
    expect(readAt(value, ['toString'])).toEqual({ found: false });
    expect(readAt(undefined, [])).toEqual({ found: false });
  });
});

describe('foldRecords', () => {
  it('applies every record oldest to newest', () => {
    const records = [write('state', [], 'merge', { a: 1, items: [] }), write('state', ['items'], 'push', 'x'), write('state', ['a'], 'set', 2)];
    expect(foldRecords(records)).toEqual({ a: 2, items: ['x'] });
  });

  it('folds nothing into undefined', () => {
    expect(foldRecords([])).toBeUndefined();
  });

  it('returns a value detached from the records', () => {
    const records = [write('state', [], 'set', { a: { b: 1 } })];
    (foldRecords(records) as { a: { b: number } }).a.b = 99;
    expect(records[0]!.value).toEqual({ a: { b: 1 } });
  });

  it('copies a container at most once, however many writes change it (PLAN-9)', () => {
    const size = 2000;
    const records = [
      write('state', [], 'set', { first: 0 }),
      ...Array.from({ length: size }, (_, index) => write('state', [`k${index}`], index % 2 === 0 ? 'set' : 'merge', { n: index })),
      ...Array.from({ length: size }, (_, index) => write('state', ['list'], 'push', index)),
    ];
    // Copying an object or array of the state walks all its entries: count the big walks.
    let bigWalks = 0;
    const entries = Object.entries;
    const slice = Array.prototype.slice;
    const spies = [
      vi.spyOn(Object, 'entries').mockImplementation((value: object) => {
        const result = entries(value);
        if (result.length > 100) bigWalks += 1;
        return result;
      }),
      vi.spyOn(Array.prototype, 'slice').mockImplementation(function (this: unknown[], start?: number, end?: number) {
        if (this.length > 100) bigWalks += 1;
        return slice.call(this, start, end);
      }),
    ];
    try {
      const folded = foldRecords(records) as Record<string, unknown>;
      expect(Object.keys(folded)).toHaveLength(size + 2);
      expect((folded.list as number[])[size - 1]).toBe(size - 1);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(bigWalks).toBe(0);
  });
});

describe('visibleRecords', () => {
  const g1 = write('state', ['a'], 'set', 'g1');
  const i1 = write('state', ['a'], 'set', 'i1', 'i1');
  const g2 = write('state', ['b'], 'set', 'g2');
  const i2 = write('state', ['a'], 'set', 'i2', 'i2');
  const other = write('input', ['a'], 'set', 'other');
  const records = [g1, i1, g2, i2, other];

  it('shows only global records without an instance', () => {
    expect(visibleRecords(records, 'state', undefined)).toEqual([g1, g2]);
  });

  it('shows global records first, then the instance own records', () => {
    expect(visibleRecords(records, 'state', 'i1')).toEqual([g1, g2, i1]);
    expect(visibleRecords(records, 'state', 'i2')).toEqual([g1, g2, i2]);
  });
});

describe('readPath', () => {
  it('reads the newest set at the path', () => {
    const records = [write('state', ['a'], 'set', 1), write('state', ['a'], 'set', 2)];
    expect(readPath(records, 'state', undefined, ['a'])).toEqual({ found: true, value: 2 });
  });

  it('applies the writes collected after a set on top of it, oldest first', () => {
    const records = [
      write('state', ['items'], 'set', [1]),
      write('state', ['items'], 'push', 2),
      write('state', ['items'], 'concat', [3, 4]),
      write('state', ['other'], 'set', 'skipped'),
    ];
    expect(readPath(records, 'state', undefined, ['items'])).toEqual({ found: true, value: [1, 2, 3, 4] });
  });

  it('stops at a set above the path and ignores everything older', () => {
    const records = [write('state', ['a', 'b'], 'set', 'old'), write('state', ['a'], 'set', { b: 'new' }), write('state', ['a'], 'merge', { c: 1 })];
    expect(readPath(records, 'state', undefined, ['a', 'b'])).toEqual({ found: true, value: 'new' });
    expect(readPath(records, 'state', undefined, ['a'])).toEqual({ found: true, value: { b: 'new', c: 1 } });
  });

  it('includes writes below the path', () => {
    const records = [write('state', ['a'], 'set', { x: 1 }), write('state', ['a', 'y'], 'set', 2), write('state', ['a', 'list'], 'push', 'z')];
    expect(readPath(records, 'state', undefined, ['a'])).toEqual({ found: true, value: { x: 1, y: 2, list: ['z'] } });
  });

  it('reads merged document messages', () => {
    const records = [write('profile', [], 'merge', { a: { b: 1 } }), write('profile', [], 'merge', { a: { c: 2 } })];
    expect(readPath(records, 'profile', undefined, ['a'])).toEqual({ found: true, value: { b: 1, c: 2 } });
  });

  it('reads through array indices', () => {
    const records = [write('state', ['items'], 'set', [{ id: 'a' }]), write('state', ['items'], 'push', { id: 'b' })];
    expect(readPath(records, 'state', undefined, ['items', 1, 'id'])).toEqual({ found: true, value: 'b' });
  });

  it('reports a missing path, and a null value as found', () => {
    const records = [write('state', ['a'], 'set', null)];
    expect(readPath(records, 'state', undefined, ['a'])).toEqual({ found: true, value: null });
    expect(readPath(records, 'state', undefined, ['a', 'b'])).toEqual({ found: false });
    expect(readPath(records, 'state', undefined, ['b'])).toEqual({ found: false });
    expect(readPath([], 'state', undefined, [])).toEqual({ found: false });
  });

  it('lets an instance see global records', () => {
    const records = [write('state', ['a'], 'set', 'global')];
    expect(readPath(records, 'state', 'i1', ['a'])).toEqual({ found: true, value: 'global' });
  });

  it('lets an instance record override a global one for that instance only', () => {
    const records = [write('state', ['a'], 'set', 'mine', 'i1'), write('state', ['a'], 'set', 'global')];
    expect(readPath(records, 'state', 'i1', ['a'])).toEqual({ found: true, value: 'mine' });
    expect(readPath(records, 'state', 'i2', ['a'])).toEqual({ found: true, value: 'global' });
    expect(readPath(records, 'state', undefined, ['a'])).toEqual({ found: true, value: 'global' });
  });

  it('never shows one instance the records of another', () => {
    const records = [write('state', ['secret'], 'set', 'i2 only', 'i2')];
    expect(readPath(records, 'state', 'i1', ['secret'])).toEqual({ found: false });
    expect(readPath(records, 'state', undefined, ['secret'])).toEqual({ found: false });
    expect(readPath(records, 'state', 'i2', ['secret'])).toEqual({ found: true, value: 'i2 only' });
  });

  it('returns values detached from the records', () => {
    const records = [write('state', ['a'], 'set', { b: 1 })];
    (readPath(records, 'state', undefined, ['a']).value as { b: number }).b = 2;
    expect(records[0]!.value).toEqual({ b: 1 });
  });
});

describe('viewOf', () => {
  it('gives the whole merged value of a kind for an instance', () => {
    const records = [write('state', [], 'merge', { a: 1 }), write('state', ['b'], 'set', 2, 'i1'), write('state', ['c'], 'set', 3, 'i2')];
    expect(viewOf(records, 'state', 'i1')).toEqual({ found: true, value: { a: 1, b: 2 } });
    expect(viewOf(records, 'state', undefined)).toEqual({ found: true, value: { a: 1 } });
    expect(viewOf(records, 'input', undefined)).toEqual({ found: false });
  });
});
