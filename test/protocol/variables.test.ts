/** Unit tests of variables: references, expressions, output paths, data records and their resolution. */
import { describe, expect, it, vi } from 'vitest';
import { MAX_NESTING_DEPTH } from '../../src/protocol/json.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import type { Message, OutputMethod } from '../../src/protocol/types.js';
import {
  applyWrite,
  createLookup,
  dataRecordOf,
  findReferences,
  foldRecords,
  formatPath,
  formatReference,
  makeReference,
  makeWrite,
  parseExpression,
  parseOutputPath,
  parsePath,
  parseReference,
  readAt,
  readPath,
  resolveValue,
  validateExpression,
  viewOf,
  visibleRecords,
  type DataRecord,
  type PathSegment,
  type Reference,
  type ReferenceLookup,
} from '../../src/protocol/variables.js';

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

/** A lookup over a fixed object of kinds, as a loop would give one. */
const lookupIn =
  (data: Record<string, unknown>): ReferenceLookup =>
  (reference) =>
    reference.kind in data ? readAt(data[reference.kind], reference.segments) : { found: false };

describe('parseReference', () => {
  it('parses a kind with a dotted path', () => {
    expect(parseReference('†input.userName')).toEqual({ kind: 'input', path: 'userName', segments: ['userName'], text: '†input.userName' });
  });

  it('parses array indices as numbers', () => {
    expect(parseReference('†state.items[0].id')).toEqual({ kind: 'state', path: 'items[0].id', segments: ['items', 0, 'id'], text: '†state.items[0].id' });
  });

  it('parses a reference to a whole kind with an empty path', () => {
    expect(parseReference('†output')).toEqual({ kind: 'output', path: '', segments: [], text: '†output' });
  });

  it('parses quoted keys as strings, even when they are digits', () => {
    expect(parseReference('†state.a["x y"]')?.segments).toEqual(['a', 'x y']);
    expect(parseReference("†state.a['x.y']")?.segments).toEqual(['a', 'x.y']);
    expect(parseReference('†state["0"]')).toMatchObject({ path: '["0"]', segments: ['0'] });
  });

  it('reads a digit key after a dot as an index', () => {
    expect(parseReference('†state.items.0')?.segments).toEqual(['items', 0]);
  });

  it('accepts kinds with dashes and underscores and keys in any script', () => {
    expect(parseReference('†user_profile-v2.имя')?.segments).toEqual(['имя']);
    expect(parseReference('†user_profile-v2.имя')?.kind).toBe('user_profile-v2');
  });

  it('rejects text that is not exactly one reference', () => {
    for (const text of [
      'input.userName',
      '†',
      '†1abc',
      '†input.',
      '†input..a',
      '†input[x]',
      '†input[-1]',
      '†input[01]',
      ' †input',
      '†input.a b',
      '†input.a[*]',
      '†input["a]',
      '†input.a || †input.b',
    ]) {
      expect(parseReference(text), text).toBeUndefined();
    }
  });
});

describe('how long a reference path may be (DOC-10)', () => {
  it('reads text with more than MAX_NESTING_DEPTH path segments as no reference', () => {
    expect(parseReference(`†state${'[0]'.repeat(MAX_NESTING_DEPTH)}`)?.segments).toHaveLength(MAX_NESTING_DEPTH);
    expect(parseReference(`†state${'[0]'.repeat(MAX_NESTING_DEPTH + 1)}`)).toBeUndefined();
    expect(findReferences({ x: `†state${'.a'.repeat(10_000)}` })).toEqual([]);
  });
});

describe('parsePath and formatPath', () => {
  it('parses an empty path as the root', () => {
    expect(parsePath('')).toEqual([]);
  });

  it('parses dotted, indexed and quoted paths', () => {
    expect(parsePath('items[0].name')).toEqual(['items', 0, 'name']);
    expect(parsePath('["x y"].a')).toEqual(['x y', 'a']);
    expect(parsePath('[2]')).toEqual([2]);
  });

  it('rejects malformed paths', () => {
    expect(parsePath('.a')).toBeUndefined();
    expect(parsePath('a.')).toBeUndefined();
    expect(parsePath('a[')).toBeUndefined();
  });

  it('formats plain keys with dots, numbers with brackets and other keys quoted', () => {
    expect(formatPath(['items', 0, 'name'])).toBe('items[0].name');
    expect(formatPath(['x y', '0', 'say "hi"'])).toBe(`["x y"]["0"]['say "hi"']`);
    expect(formatPath([])).toBe('');
  });

  it('refuses keys the syntax cannot express', () => {
    expect(() => formatPath([`it's "x"`])).toThrow(RangeError);
    expect(() => formatPath(['a]b'])).toThrow(RangeError);
    expect(() => formatPath([-1])).toThrow(RangeError);
  });

  it('formats references that parse back to the same kind and segments', () => {
    expect(formatReference('state', ['items', 0, 'id'])).toBe('†state.items[0].id');
    expect(formatReference('output')).toBe('†output');
    expect(formatReference('state', ['x y'])).toBe('†state["x y"]');
    expect(makeReference('state', ['x y', 1])).toEqual({ kind: 'state', path: '["x y"][1]', segments: ['x y', 1], text: '†state["x y"][1]' });
    expect(() => formatReference('1bad')).toThrow(RangeError);
  });
});

describe('parseExpression', () => {
  it('parses a single reference as a ref expression', () => {
    expect(parseExpression('†input.name')).toEqual({ op: 'ref', refs: [ref('†input.name')] });
  });

  it('parses references joined by || as an or expression', () => {
    expect(parseExpression('†input.a || †state.b||†data.c')).toEqual({ op: 'or', refs: [ref('†input.a'), ref('†state.b'), ref('†data.c')] });
  });

  it('parses references joined by && as an and expression', () => {
    expect(parseExpression('†input.a && †state.b')).toEqual({ op: 'and', refs: [ref('†input.a'), ref('†state.b')] });
  });

  it('ignores whitespace around the whole expression', () => {
    expect(parseExpression('  †input.a  ')?.op).toBe('ref');
  });

  it('keeps operators inside quoted keys as part of the key', () => {
    expect(parseExpression('†state["a||b"] || †state.c')?.refs.map((r) => r.segments)).toEqual([['a||b'], ['c']]);
  });

  it('returns undefined for mixed operators, templates, dangling operators and plain strings', () => {
    for (const text of ['†a.x || †b.y && †c.z', 'Hello †input.name!', '†input.name!', '†a.x ||', '|| †a.x', '†a.x || b', 'plain', '']) {
      expect(parseExpression(text), text).toBeUndefined();
    }
  });
});

describe('findReferences', () => {
  it('finds references in nested objects and arrays, in order, without reading keys', () => {
    const params = {
      '†state.key': 'literal',
      a: '†input.a',
      b: ['Hello †input.name, you are †input.age', { c: '†state.x || †state.y' }],
      d: 3,
      e: null,
    };
    expect(findReferences(params).map((r) => r.text)).toEqual(['†input.a', '†input.name', '†input.age', '†state.x', '†state.y']);
  });

  it('finds nothing in values without references', () => {
    expect(findReferences({ a: 'no sigil', b: [1, true, null] })).toEqual([]);
    expect(findReferences('† alone')).toEqual([]);
  });
});

describe('resolveValue', () => {
  const data = { input: { name: 'Ada', age: 36, tags: ['x'], nothing: null, flag: false }, state: { items: [{ id: 'i-1' }] } };
  const lookup = lookupIn(data);

  it('gives a whole-reference parameter the referenced value with its type', () => {
    expect(resolveValue('†input.age', lookup)).toEqual({ status: 'resolved', value: 36 });
    expect(resolveValue('†input.tags', lookup)).toEqual({ status: 'resolved', value: ['x'] });
    expect(resolveValue('†input.flag', lookup)).toEqual({ status: 'resolved', value: false });
    expect(resolveValue('†state.items[0].id', lookup)).toEqual({ status: 'resolved', value: 'i-1' });
    expect(resolveValue('†input', lookup)).toEqual({ status: 'resolved', value: data.input });
  });

  it('treats a null value as found', () => {
    expect(resolveValue('†input.nothing', lookup)).toEqual({ status: 'resolved', value: null });
  });

  it('blocks on a reference that resolves to nothing', () => {
    expect(resolveValue('†input.missing', lookup)).toEqual({ status: 'blocked', missing: [ref('†input.missing')] });
    expect(resolveValue('†other.x', lookup)).toEqual({ status: 'blocked', missing: [ref('†other.x')] });
  });

  it('takes the first found reference of an || expression', () => {
    expect(resolveValue('†input.missing || †input.age || †input.name', lookup)).toEqual({ status: 'resolved', value: 36 });
    expect(resolveValue('†input.nothing || †input.age', lookup)).toEqual({ status: 'resolved', value: null });
  });

  it('blocks an || expression only when no reference is found, listing them all', () => {
    expect(resolveValue('†input.m1 || †input.m2', lookup)).toEqual({ status: 'blocked', missing: [ref('†input.m1'), ref('†input.m2')] });
  });

  it('waits for every reference of an && expression and takes the last', () => {
    expect(resolveValue('†input.name && †input.age', lookup)).toEqual({ status: 'resolved', value: 36 });
    expect(resolveValue('†input.name && †input.m1 && †input.m2', lookup)).toEqual({ status: 'blocked', missing: [ref('†input.m1'), ref('†input.m2')] });
  });

  it('interpolates templates, strings as they are and other values as JSON', () => {
    expect(resolveValue('Hello †input.name, you are †input.age with †input.tags and †input.nothing!', lookup)).toEqual({
      status: 'resolved',
      value: 'Hello Ada, you are 36 with ["x"] and null!',
    });
  });

  it('blocks a template when any embedded reference is missing', () => {
    expect(resolveValue('Hello †input.name and †input.missing', lookup)).toEqual({ status: 'blocked', missing: [ref('†input.missing')] });
  });

  it('returns strings without references as they are', () => {
    expect(resolveValue('plain || text', lookup)).toEqual({ status: 'resolved', value: 'plain || text' });
  });

  it('walks objects and arrays deeply, keeps keys and never mutates the input', () => {
    const params = { '†input.name': ['†input.name', { deep: '†input.age' }], n: 1, b: true, z: null };
    const before = structuredClone(params);
    expect(resolveValue(params, lookup)).toEqual({ status: 'resolved', value: { '†input.name': ['Ada', { deep: 36 }], n: 1, b: true, z: null } });
    expect(params).toEqual(before);
  });

  it('collects every missing reference of a nested value, each once', () => {
    const result = resolveValue({ a: '†input.m1', b: ['†input.m1', '†input.m2'], c: '†input.name' }, lookup);
    expect(result).toEqual({ status: 'blocked', missing: [ref('†input.m1'), ref('†input.m2')] });
  });

  it('keeps a __proto__ key an ordinary key', () => {
    const params = JSON.parse('{"__proto__": {"polluted": "†input.name"}}') as unknown;
    const result = resolveValue(params, lookup);
    expect(result.status).toBe('resolved');
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parseOutputPath', () => {
  it('parses one target', () => {
    expect(parseOutputPath('†state.summary')).toEqual({ op: 'ref', targets: [ref('†state.summary')] });
    expect(parseOutputPath('†output')).toEqual({ op: 'ref', targets: [ref('†output')] });
  });

  it('parses alternative outcomes and fan-outs', () => {
    expect(parseOutputPath('†state.approved || †state.rejected')).toEqual({ op: 'or', targets: [ref('†state.approved'), ref('†state.rejected')] });
    expect(parseOutputPath('†state.a && †output.summary')).toEqual({ op: 'and', targets: [ref('†state.a'), ref('†output.summary')] });
  });

  it('returns undefined for anything else', () => {
    expect(parseOutputPath('state.summary')).toBeUndefined();
    expect(parseOutputPath('†a.x || †b.y && †c.z')).toBeUndefined();
  });
});

describe('validateExpression', () => {
  it('accepts well-formed expressions and ignores strings that do not look like expressions', () => {
    expect(validateExpression('†a.x || †b.y', 'input')).toBeUndefined();
    expect(validateExpression('†a.x && †b.y', 'output')).toBeUndefined();
    expect(validateExpression('Hello †input.name || friend', 'input')).toBeUndefined();
    expect(validateExpression('†input.name', 'input')).toBeUndefined();
    expect(validateExpression('plain', 'input')).toBeUndefined();
  });

  it('explains mixed operators in a full sentence', () => {
    const problem = validateExpression('†a.x || †b.y && †c.z', 'input');
    expect(problem).toMatch(/^The input expression ".*" mixes `\|\|` and `&&`; use one operator: .*\.$/);
  });

  it('names a side that is not a reference', () => {
    expect(validateExpression('†a.x || b.y', 'input')).toMatch(/has "b\.y" where a reference/);
    expect(validateExpression('†a.x ||', 'output')).toMatch(/^The output path .* has an empty side where a reference/);
  });

  it('reports an output path that is not a reference at all', () => {
    expect(validateExpression('state.summary', 'output')).toMatch(/^The output path "state\.summary" is not a reference/);
  });

  it('names a reference whose path is longer than MAX_NESTING_DEPTH segments, wherever it is (DOC-10)', () => {
    const long = `†state${'.a'.repeat(MAX_NESTING_DEPTH + 1)}`;
    expect(validateExpression(long, 'output')).toMatch(/has a path of more than 100 segments, the most a reference's path may have\.$/);
    expect(validateExpression(`Hello ${long}`, 'input')).toMatch(/holds a reference whose path has more than 100 segments/);
    expect(validateExpression(`†state.x || ${long}`, 'input')).toMatch(/has a path of more than 100 segments/);
    expect(validateExpression(`†state${'.a'.repeat(MAX_NESTING_DEPTH)}`, 'output')).toBeUndefined();
  });
});

describe('dataRecordOf', () => {
  it('turns a document data message into a root merge record of its kind', () => {
    expect(dataRecordOf({ type: 'data', kind: 'profile', data: { a: 1 } })).toEqual({ kind: 'profile', path: [], method: 'merge', value: { a: 1 } });
  });

  it('gives a data message without a kind the kind data', () => {
    expect(dataRecordOf({ type: 'data', data: 1 } as Message)?.kind).toBe('data');
  });

  it('turns input and state messages into records of their own kind', () => {
    expect(dataRecordOf({ type: 'input', input: { q: 'x' }, _instance: 'i1' })).toEqual({
      kind: 'input',
      instance: 'i1',
      path: [],
      method: 'merge',
      value: { q: 'x' },
    });
    expect(dataRecordOf({ type: 'state', state: { n: 0 } })).toEqual({ kind: 'state', path: [], method: 'merge', value: { n: 0 } });
  });

  it('gives no record for an input template slot or a non-data message', () => {
    expect(dataRecordOf({ type: 'input', schema: { type: 'object' } })).toBeUndefined();
    expect(dataRecordOf({ type: 'user', text: 'hi' })).toBeUndefined();
  });

  it('reads the path, method, call and date of a write message', () => {
    const message = {
      type: 'data',
      kind: 'state',
      data: 'x',
      _path: 'items[0].name',
      _outputMethod: 'push',
      _call: 'c1',
      _date: '2024-01-01T00:00:00.000Z',
      _instance: 'i2',
    } as const;
    expect(dataRecordOf(message)).toEqual({
      kind: 'state',
      instance: 'i2',
      path: ['items', 0, 'name'],
      method: 'push',
      value: 'x',
      call: 'c1',
      date: '2024-01-01T00:00:00.000Z',
    });
  });

  it('defaults the method of a write to set and reads an empty path as the root', () => {
    expect(dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: '' })).toMatchObject({ path: [], method: 'set' });
  });

  it('refuses an unreadable path or method with an invalid_request error', () => {
    expect(() => dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: 'a[' })).toThrow(ProtocolError);
    expect(() => dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: 'a', _outputMethod: 'replace' } as Message)).toThrow(/_outputMethod "replace"/);
  });
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

  it('round-trips through dataRecordOf', () => {
    const record = dataRecordOf(makeWrite(ref('†state["x y"][2]'), 5, { method: 'concat', date: 'D' }));
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

describe('createLookup', () => {
  it('resolves call parameters from records for one instance', () => {
    const messages: Message[] = [
      { type: 'input', input: { name: 'Ada' } },
      { type: 'state', state: { step: 1 } },
      makeWrite(ref('†state.step'), 2, { instance: 'i1', date: 'D' }),
    ];
    const records = messages.map(dataRecordOf).filter((record): record is DataRecord => record !== undefined);
    expect(resolveValue({ who: '†input.name', step: '†state.step' }, createLookup(records, 'i1'))).toEqual({
      status: 'resolved',
      value: { who: 'Ada', step: 2 },
    });
    expect(resolveValue('†state.step', createLookup(records, 'i2'))).toEqual({ status: 'resolved', value: 1 });
  });
});
