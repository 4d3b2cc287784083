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
    ['an open object', { type: 'object', properties: { a: { type: 'string' }, o: { type: 'object', properties: {}, additionalProperties: true } } }, 'o'],
    ['a map', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string' } } } }, 'm'],
    ['a free-form object', { type: 'object', properties: { m: { type: 'object' } } }, 'm'],
    ['a value of any type', { type: 'object', properties: { output: {} } }, 'output'],
    ['not', { type: 'object', properties: { a: { not: { type: 'string' } } } }, 'a'],
    // biome-ignore lint/suspicious/noThenProperty: a JSON Schema's if/then keyword, not a thenable.
    ['a conditional', { type: 'object', properties: { a: { type: 'string', if: { minLength: 1 }, then: { maxLength: 3 } } } }, 'a'],
    ['a tuple', { type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } }, 'a'],
    ['an array without items', { type: 'object', properties: { a: { type: 'array' } } }, 'a'],
    ['a remote $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, 'a'],
    ['an overlapping oneOf', { type: 'object', properties: { a: { oneOf: [{ type: 'string' }, { type: 'string', minLength: 2 }] } } }, 'a'],
    ['patternProperties', { type: 'object', properties: { a: { type: 'object', patternProperties: { '^x': { type: 'string' } } } } }, 'a'],
    ['an unknown keyword', { type: 'object', properties: { a: { type: 'string', contentSchema: {} } } }, 'a'],
  ])('stays strict and sends %s as a JSON-encoded string, decoded on receipt (MODEL-14)', (_, schema, name) => {
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    expect(result.encoded).toEqual([{ pointer: `#/properties/${name}`, reason: expect.any(String) }]);
    const sent = (result.schema as { properties: Record<string, { type: unknown; description: string }> }).properties[name];
    // Optional, so nullable, unless the part accepts null already.
    expect(sent?.type).toEqual(name === 'output' ? 'string' : ['string', 'null']);
    expect(sent?.description).toContain('JSON-encoded');
    expect(sent?.description).toContain(JSON.stringify((schema.properties as Record<string, unknown>)[name]));
    expect(fromStrictValue({ [name]: '{"k": ["v", 1]}' }, schema, result.encodedNodes)).toEqual({ [name]: { k: ['v', 1] } });
    expect(fromStrictValue({ [name]: 'not json' }, schema, result.encodedNodes)).toEqual({ [name]: 'not json' });
  });

  it('encodes a boolean schema too, though it cannot be found again: its value is then the string', () => {
    const result = toStrictSchema({ type: 'object', properties: { output: true } });
    expect(result).toMatchObject({ strict: true, encoded: [{ pointer: '#/properties/output' }] });
  });

  it.each([
    ['an open root object', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true }, '#'],
    ['root patternProperties', { type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x': { type: 'string' } } }, '#'],
    ['a root that is not an object', { type: 'array', items: { type: 'string' } }, '#'],
  ])('falls back to the original schema, not strict, for %s, naming the part', (_, schema, pointer) => {
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(false);
    expect(result.schema).toBe(schema);
    expect(result.reason).toEqual(expect.any(String));
    expect(result.pointer).toBe(pointer);
  });

  const wide = (count: number, length: number) => Array.from({ length: count }, (_, index) => `${String(index).padStart(length, 'v')}`);
  it.each([
    [
      'an enum of 300 values totalling 18,000 characters',
      { e: { enum: wide(300, 60) } },
      /300 enum values totalling 18000 characters, more than OpenAI's 15000/,
    ],
    ['1,200 enum values', { e: { enum: wide(1200, 4) } }, /1202 enum values, more than OpenAI's 1000/],
    [
      '126,006 characters of property names',
      { e: { type: 'object', properties: Object.fromEntries(wide(2001, 63).map((name) => [name, { type: 'string' }])) } },
      /126\d{3} characters .* more than OpenAI's 120000/,
    ],
  ])('stays strict past an OpenAI limit, sending the part that passes it encoded: %s (MODEL-16)', (_, properties, reason) => {
    const schema = { type: 'object', properties: { ...properties, small: { enum: ['a', 'b'] } }, required: ['e', 'small'] };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    expect(result.encoded).toEqual([{ pointer: '#/properties/e', reason: expect.stringMatching(reason) }]);
    expect((result.schema as { properties: Record<string, unknown> }).properties.small).toEqual({ enum: ['a', 'b'], type: 'string' });
    expect(fromStrictValue({ e: '"0007"', small: 'a' }, schema, result.encodedNodes)).toEqual({ e: '0007', small: 'a' });
  });

  it.each([
    ['126,006 characters of property names at the root', Object.fromEntries(wide(2001, 63).map((name) => [name, { type: 'string' }])), /120000/],
    ['objects nested 12 levels', { a: nest(12) }, /deeper than 10 levels/],
  ])('is not strict past an OpenAI limit no encoded part can fix: %s (MODEL-16)', (_, properties, reason) => {
    const schema = { type: 'object', properties, required: Object.keys(properties) };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(false);
    expect(result.reason).toMatch(reason);
    expect(result.pointer).toMatch(/^#/);
  });

  it('drops the annotations beside a $ref, which OpenAI refuses (MODEL-16)', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      properties: { where: { $ref: '#/$defs/point', description: 'Where.' } },
      required: ['where'],
    };
    const result = toStrictSchema(schema);
    expect(result.strict).toBe(true);
    expect((result.schema as { properties: { where: unknown } }).properties.where).toEqual({ $ref: '#/$defs/point' });
  });
});

/** An object schema nesting `levels` objects. */
function nest(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 0; level < levels; level += 1) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

describe('toStrictSchema for Anthropic (MODEL-15)', () => {
  it('closes objects, keeps optional properties optional and says the constraints Anthropic lacks', () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1, maximum: 9 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 4 },
        u: { type: 'string', format: 'uri' },
      },
      required: ['n'],
    };
    const result = toStrictSchema(schema, 'anthropic');
    expect(result.strict).toBe(true);
    expect(result.schema).toEqual({
      type: 'object',
      properties: {
        n: { type: 'integer', description: 'At least 1. At most 9.' },
        tags: { type: 'array', items: { type: 'string' }, description: 'At least 2 items. At most 4 items.' },
        u: { type: 'string', format: 'uri' },
      },
      required: ['n'],
      additionalProperties: false,
    });
  });

  it('sends a recursive part as a JSON-encoded string', () => {
    const schema = {
      type: 'object',
      $defs: {
        node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] },
      },
      properties: { tree: { $ref: '#/$defs/node' } },
      required: ['tree'],
    };
    const result = toStrictSchema(schema, 'anthropic');
    expect(result.strict).toBe(true);
    const sent = result.schema as { $defs: unknown; properties: { tree: { type: string; description: string } } };
    expect(sent.$defs).toEqual({});
    expect(sent.properties.tree.type).toBe('string');
    // The string's schema comes with the definitions it refers to.
    expect(sent.properties.tree.description).toContain('"children"');
    expect(fromStrictValue({ tree: '{"name": "a", "children": []}' }, schema, result.encodedNodes)).toEqual({ tree: { name: 'a', children: [] } });
    expect(toStrictSchema(schema, 'openai').encoded).toEqual([]);
  });

  it('is not strict past 24 optional properties', () => {
    const properties = Object.fromEntries(wideNames(25).map((name) => [name, { type: 'string' }]));
    const result = toStrictSchema({ type: 'object', properties }, 'anthropic');
    expect(result).toMatchObject({ strict: false, reason: expect.stringMatching(/24 optional/) });
  });
});

/** `count` property names. */
function wideNames(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `p${index}`);
}

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
