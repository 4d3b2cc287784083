/** Unit tests of the strict-subset transform and the mapping of strict answers back to the original schema. */
import { describe, expect, it } from 'vitest';
import { fromStrictValue, toStrictSchema } from '../../src/models/strict-schema.js';
import { solutionSchema } from './support/solution-schema.js';

describe('toStrictSchema', () => {
  it('closes objects, requires every property and makes optional ones nullable', () => {
    const result = toStrictSchema(solutionSchema);
    expect(result.strict).toBe(true);
    expect(result.schema).toEqual({
      type: 'object',
      properties: {
        calls: {
          type: 'array',
          items: {
            anyOf: [
              {
                type: 'object',
                properties: { _tool: { enum: ['synth'], type: 'string' }, sound: { type: 'string' }, _outputPath: { type: ['string', 'null'] } },
                required: ['_tool', 'sound', '_outputPath'],
                additionalProperties: false,
              },
              {
                type: 'object',
                properties: { _tool: { enum: ['mix'], type: 'string' }, tracks: { type: 'array', items: { type: 'string' } } },
                required: ['_tool', 'tracks'],
                additionalProperties: false,
              },
            ],
          },
        },
        output: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
      required: ['calls', 'output'],
      additionalProperties: false,
    });
  });

  it('wraps optional objects, arrays, enums and refs in anyOf with null, and keeps already-nullable ones', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      properties: {
        where: { $ref: '#/$defs/point' },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        mood: { enum: ['calm', 'loud'] },
        note: { type: ['string', 'null'], default: null, format: 'uri' },
        when: { type: 'string', format: 'date-time' },
      },
    };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    expect(result.schema).toEqual({
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } },
      properties: {
        where: { anyOf: [{ $ref: '#/$defs/point' }, { type: 'null' }] },
        tags: { anyOf: [{ type: 'array', items: { type: 'string' }, description: 'No two items are equal.' }, { type: 'null' }] },
        mood: { anyOf: [{ enum: ['calm', 'loud'], type: 'string' }, { type: 'null' }] },
        note: { type: ['string', 'null'], description: 'Format: uri.' },
        when: { type: ['string', 'null'], format: 'date-time' },
      },
      required: ['where', 'tags', 'mood', 'note', 'when'],
      additionalProperties: false,
    });
  });

  it('merges allOf and turns a discriminated oneOf into anyOf', () => {
    const schema = {
      type: 'object',
      allOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'integer' } } }],
      properties: {
        pick: {
          oneOf: [
            { type: 'object', properties: { kind: { const: 'x' } }, required: ['kind'] },
            { type: 'object', properties: { kind: { const: 'y' }, n: { type: 'integer' } }, required: ['kind'] },
          ],
        },
      },
      required: ['pick'],
    };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    const strict = result.schema as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(strict.properties).sort()).toEqual(['a', 'b', 'pick']);
    expect(strict.required.sort()).toEqual(['a', 'b', 'pick']);
    expect(strict.properties.b).toEqual({ type: ['integer', 'null'] });
    expect((strict.properties.pick as { anyOf: unknown[] }).anyOf).toHaveLength(2);
  });

  it('says constraints the strict subset lacks in the description instead of sending them', () => {
    const schema = {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'A ticket code.', minLength: 3, maxLength: 8, pattern: '^[A-Z]+$' },
        site: { type: 'string', format: 'uri' },
        day: { type: 'string', format: 'date' },
        count: { type: 'integer', minimum: 1, maximum: 9 },
      },
      required: ['code', 'site', 'day', 'count'],
    };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    expect((result.schema as { properties: unknown }).properties).toEqual({
      code: { type: 'string', description: 'A ticket code. At least 3 characters. At most 8 characters. Matches the regular expression "^[A-Z]+$".' },
      site: { type: 'string', description: 'Format: uri.' },
      day: { type: 'string', format: 'date' },
      count: { type: 'integer', minimum: 1, maximum: 9 },
    });
  });

  it('gives an array that can hold nothing closed empty objects as items', () => {
    const schema = { type: 'object', properties: { calls: { type: 'array', maxItems: 0 } }, required: ['calls'] };
    const result = toStrictSchema(schema);
    expect(result).toMatchObject({ strict: true });
    expect((result.schema as { properties: { calls: unknown } }).properties.calls).toEqual({
      type: 'array',
      maxItems: 0,
      items: { type: 'object', properties: {}, required: [], additionalProperties: false },
    });
  });

  it.each([
    ['an open object', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true }],
    ['a map-like object', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string' } } } }],
    ['a free-form object', { type: 'object', properties: { m: { type: 'object' } } }],
    ['a value of any type', { type: 'object', properties: { output: {} } }],
    ['a boolean schema', { type: 'object', properties: { output: true } }],
    ['not', { type: 'object', properties: { a: { not: { type: 'string' } } } }],
    // biome-ignore lint/suspicious/noThenProperty: a JSON Schema's if/then keyword, not a thenable.
    ['a conditional', { type: 'object', properties: { a: { type: 'string', if: { minLength: 1 }, then: { maxLength: 3 } } } }],
    ['a tuple', { type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } }],
    ['an array without items', { type: 'object', properties: { a: { type: 'array' } } }],
    ['a remote $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }],
    ['an overlapping oneOf', { type: 'object', properties: { a: { oneOf: [{ type: 'string' }, { type: 'string', minLength: 2 }] } } }],
    ['patternProperties', { type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x': { type: 'string' } } }],
    ['a root that is not an object', { type: 'array', items: { type: 'string' } }],
    ['an unknown keyword', { type: 'object', properties: { a: { type: 'string', contentSchema: {} } } }],
  ])('falls back to the original schema, not strict, for %s', (_, schema) => {
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(false);
    expect(result.schema).toBe(schema);
    expect(result.reason).toEqual(expect.any(String));
  });
});

describe('fromStrictValue', () => {
  it('removes nulls of optional properties only, through refs and unions', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' }, label: { type: 'string' } }, required: ['x'] } },
      properties: {
        must: { type: ['string', 'null'] },
        maybe: { type: 'string' },
        nullable: { type: ['string', 'null'] },
        where: { $ref: '#/$defs/point' },
        calls: solutionSchema.properties.calls,
      },
      required: ['must'],
    };
    const value = {
      must: null,
      maybe: null,
      nullable: null,
      where: { x: 1, label: null },
      calls: [
        { _tool: 'synth', sound: 'piano', _outputPath: null },
        { _tool: 'mix', tracks: [] },
      ],
    };
    expect(fromStrictValue(value, schema)).toEqual({
      must: null,
      nullable: null,
      where: { x: 1 },
      calls: [
        { _tool: 'synth', sound: 'piano' },
        { _tool: 'mix', tracks: [] },
      ],
    });
  });

  it('keeps unknown properties and property names like __proto__ or constructor as plain data', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' } } };
    const value = JSON.parse('{"constructor": null, "__proto__": {"polluted": true}, "extra": null}') as unknown;
    const mapped = fromStrictValue(value, schema) as Record<string, unknown>;
    expect(Object.keys(mapped)).toEqual(['__proto__', 'extra']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves values that match no branch unchanged', () => {
    expect(fromStrictValue({ calls: [{ _tool: 'unknown', x: null }], output: null }, solutionSchema)).toEqual({
      calls: [{ _tool: 'unknown', x: null }],
      output: null,
    });
  });
});
