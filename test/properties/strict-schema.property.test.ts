/** Property: values valid for the strict form of a Solution-like schema map back (fromStrictValue) to values valid for the original, checked with ajv. */
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromStrictValue, toStrictSchema } from '../../src/models/strict-schema.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

type Schema = Record<string, unknown>;

const propertyName = fc.constantFrom('a', 'b', 'c', 'name', 'items', '_outputPath', 'constructor', 'toString');
const leaf: fc.Arbitrary<Schema> = fc.oneof(
  fc.constantFrom<Schema>(
    { type: 'string' },
    { type: 'integer' },
    { type: 'number' },
    { type: 'boolean' },
    { type: ['string', 'null'] },
    { anyOf: [{ type: 'integer' }, { type: 'null' }] },
  ),
  fc.uniqueArray(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 3 }).map((values): Schema => ({ enum: values })),
  fc.constantFrom<unknown>('x', 1, true, null).map((value): Schema => ({ const: value })),
  fc.constant<Schema>({ type: 'string', description: 'a note', default: 'x', minLength: 0 }),
);

/** An object schema whose properties are a random subset of required ones. */
function objectOf(node: fc.Arbitrary<Schema>, extra: Record<string, Schema> = {}, alwaysRequired: string[] = []): fc.Arbitrary<Schema> {
  return fc.uniqueArray(fc.tuple(propertyName, node), { selector: ([name]) => name, maxLength: 4 }).chain((entries) =>
    fc
      .record({
        required: fc.subarray(entries.map(([name]) => name)),
        closed: fc.boolean(),
      })
      .map(({ required, closed }): Schema => {
        const properties = { ...Object.fromEntries(entries), ...extra };
        const schema: Schema = { type: 'object', properties, required: [...new Set([...alwaysRequired, ...required])] };
        // An object with no properties must be closed, or it would be free-form.
        if (closed || Object.keys(properties).length === 0) schema.additionalProperties = false;
        return schema;
      }),
  );
}

const { node } = fc.letrec<{ node: Schema; object: Schema; array: Schema; union: Schema }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('object'), tie('array'), tie('union')),
  object: objectOf(tie('node')),
  array: tie('node').map((items): Schema => ({ type: 'array', items })),
  union: fc.tuple(tie('object'), leaf).map(([object, other]): Schema => ({ anyOf: [object, other] })),
}));

const tool = (name: string): fc.Arbitrary<Schema> => objectOf(node, { _tool: { const: name } }, ['_tool']);
const solutionSchema = fc.record({ tools: fc.tuple(tool('synth'), tool('mix')), union: fc.constantFrom('anyOf', 'oneOf'), output: node }).map(
  ({ tools, union, output }): Schema => ({
    type: 'object',
    properties: { calls: { type: 'array', items: { [union]: tools } }, output },
    required: ['calls', 'output'],
    additionalProperties: false,
  }),
);

/** Values valid for a strict schema (the grammar of what toStrictSchema emits for the schemas above). */
function valuesFor(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(valuesFor));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return fc.string({ maxLength: 4 });
        case 'integer':
          return fc.integer();
        case 'number':
          return fc.double({ noNaN: true, noDefaultInfinity: true });
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return fc.array(valuesFor(schema.items as Schema), { maxLength: 3 });
        case 'object': {
          const properties = schema.properties as Record<string, Schema>;
          return fc.record(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valuesFor(property)])));
        }
        default:
          throw new Error(`unexpected type ${type}`);
      }
    }),
  );
}

// ownProperties: a property named like an Object.prototype member (toString) must not be found on {}.
const ajv = new Ajv({ strict: false, allErrors: true, ownProperties: true });

describe('toStrictSchema / fromStrictValue (property)', () => {
  it('maps every value valid for the strict form to a value valid for the original schema', () => {
    fc.assert(
      fc.property(
        solutionSchema.chain((original) => {
          const result = toStrictSchema(original);
          expect(result.reason).toBeUndefined();
          expect(result.strict).toBe(true);
          return fc.tuple(fc.constant(original), fc.constant(result.schema as Schema), valuesFor(result.schema as Schema));
        }),
        ([original, strict, value]) => {
          expect(ajv.validate(strict, value), ajv.errorsText()).toBe(true);
          const mapped = fromStrictValue(value, original);
          expect(ajv.validate(original, mapped), `${ajv.errorsText()}\n${JSON.stringify(mapped)}`).toBe(true);
        },
      ),
      settings,
    );
  }, 300_000); // ajv compiles every generated schema: allow many runs when the environment raises them
});
