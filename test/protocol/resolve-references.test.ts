/** Unit tests of resolving references: call parameters with their references replaced by values. */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { makeWrite, readAt, type DataRecord } from '../../src/protocol/variables/data-records.js';
import { recordOf } from '../../src/protocol/messages/data-messages.js';
import { parseReference, type Reference } from '../../src/protocol/variables/references.js';
import { createLookup, resolveValue, type ReferenceLookup } from '../../src/protocol/context/resolve-references.js';
import type { Message } from '../../src/protocol/types.js';

const ref = (text: string): Reference => {
  const parsed = parseReference(text);
  if (!parsed) throw new Error(`test reference ${text} does not parse`);
  return parsed;
};

/** A lookup over a fixed object of kinds, as a loop would give one. */
const lookupIn =
  (data: Record<string, unknown>): ReferenceLookup =>
  (reference) =>
    reference.kind in data ? readAt(data[reference.kind], reference.segments) : { found: false };

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

describe('createLookup', () => {
  it('resolves call parameters from records for one instance', () => {
    const messages: Message[] = [
      { type: 'input', input: { name: 'Ada' } },
      { type: 'state', state: { step: 1 } },
      makeWrite(ref('†state.step'), 2, { instance: 'i1', date: 'D' }),
    ];
    const records = messages.map((message) => recordOf(message, defaultHandlers())).filter((record): record is DataRecord => record !== undefined);
    expect(resolveValue({ who: '†input.name', step: '†state.step' }, createLookup(records, 'i1'))).toEqual({
      status: 'resolved',
      value: { who: 'Ada', step: 2 },
    });
    expect(resolveValue('†state.step', createLookup(records, 'i2'))).toEqual({ status: 'resolved', value: 1 });
  });
});
