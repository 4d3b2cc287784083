/** Property test of up-front delegate resolution: the merged parameter schema accepts exactly what both source schemas accept. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeDelegateContract } from '../../src/activities/upfront-preparer.js';
import type { JsonSchema, ToolSchema } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

/** Values drawn per property: strings of the enum pools and outside them, integers, fractions, booleans, null. */
const PROPERTY_NAMES = ['a', 'b', 'c', 'd'];
const STRINGS = ['x', 'y', 'z', 'w'];

type SimpleType = 'string' | 'integer' | 'number' | 'boolean';

/** A property schema: a simple type, optionally narrowed (string enums, numeric bounds). */
const propertySchema: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constant({ type: 'string' }),
  fc.uniqueArray(fc.constantFrom(...STRINGS.slice(0, 3)), { minLength: 1, maxLength: 3 }).map((values) => ({ type: 'string', enum: values })),
  fc
    .record({
      type: fc.constantFrom('integer', 'number'),
      minimum: fc.option(fc.integer({ min: -3, max: 6 }), { nil: undefined }),
      maximum: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
    })
    .map((schema) => Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined))),
  fc.constant({ type: 'boolean' }),
);

/** An object schema over a few of the pooled property names, with an optional `required`. */
const objectSchema: fc.Arbitrary<{ type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] }> = fc
  .uniqueArray(fc.constantFrom(...PROPERTY_NAMES), { maxLength: 4 })
  .chain((names) =>
    fc
      .record({ schemas: fc.tuple(...names.map(() => propertySchema)), required: fc.subarray(names) })
      .map(({ schemas, required }) => ({ names, schemas, required })),
  )
  .map(({ names, schemas, required }) => ({
    type: 'object' as const,
    properties: Object.fromEntries(names.map((name, index) => [name, schemas[index]!])),
    ...(required.length > 0 ? { required } : {}),
  }));

/** Values of one property: enough of every type (and near the bounds) to tell the schemas apart. */
const propertyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.integer({ min: -5, max: 11 }),
  fc.constantFrom(0.5, 2.5, -1.5),
  fc.boolean(),
  fc.constant(null),
);

const ajv = new Ajv2020({ strict: false });

/** The set of types a property schema admits (integers are numbers, so `number` covers `integer`). */
function typeSet(schema: Record<string, unknown> | undefined): Set<SimpleType> | undefined {
  if (schema === undefined || schema.type === undefined) return undefined;
  return new Set([schema.type as SimpleType]);
}

/** True when the two schemas of a shared property cannot both hold for any value of a common type, or their enums share nothing. */
function conflicting(left: Record<string, unknown>, right: Record<string, unknown>): boolean {
  const a = typeSet(left);
  const b = typeSet(right);
  if (a && b) {
    const common = [...a].some((type) => b.has(type) || (type === 'integer' && b.has('number')) || (type === 'number' && b.has('integer')));
    if (!common) return true;
  }
  if (Array.isArray(left.enum) && Array.isArray(right.enum)) return !left.enum.some((value) => (right.enum as unknown[]).includes(value));
  return false;
}

function hasConflict(tool: { properties: Record<string, Record<string, unknown>> }, input: { properties: Record<string, Record<string, unknown>> }): boolean {
  return Object.keys(tool.properties).some((name) => input.properties[name] !== undefined && conflicting(tool.properties[name]!, input.properties[name]!));
}

/** The merged schema's parameters only: `_`-prefixed meta-properties dropped (the values tested carry none). */
function parametersOf(merged: ToolSchema): JsonSchema {
  const properties = Object.fromEntries(Object.entries(merged.properties ?? {}).filter(([key]) => !key.startsWith('_')));
  return { ...merged, properties };
}

describe('up-front schema merging', () => {
  it('accepts a value with the merged schema exactly when both the tool and the delegate input schema accept it, and throws only for real conflicts', () => {
    const tally = { merged: 0, conflicts: 0 };
    fc.assert(
      fc.property(
        objectSchema,
        objectSchema,
        fc.array(fc.dictionary(fc.constantFrom(...PROPERTY_NAMES), propertyValue), { minLength: 1, maxLength: 12 }),
        (tool, input, values) => {
          const toolSchema: ToolSchema = {
            ...structuredClone(tool),
            properties: { ...structuredClone(tool.properties), _delegate: { const: './child.json' } },
          };
          let merged: ToolSchema;
          try {
            merged = mergeDelegateContract(toolSchema, structuredClone(input), { type: 'string' });
          } catch (error) {
            // A merge may only fail when some shared property really conflicts.
            expect(hasConflict(tool, input), `unexpected failure: ${(error as Error).message}`).toBe(true);
            tally.conflicts += 1;
            return;
          }
          tally.merged += 1;
          // The merged contract keeps the delegate's output as `_output` and the tool's meta-properties.
          expect(merged.properties?._output).toEqual({ type: 'string' });
          expect(merged.properties?._delegate).toEqual({ const: './child.json' });
          const known = new Set([...Object.keys(tool.properties), ...Object.keys(input.properties)]);
          const validateMerged = ajv.compile(parametersOf(merged) as object);
          const validateTool = ajv.compile(tool);
          const validateInput = ajv.compile(input);
          for (const raw of values) {
            // Only properties one side declares: the merged schema refuses any other (additionalProperties: false).
            const value = Object.fromEntries(Object.entries(raw).filter(([key]) => known.has(key)));
            const both = validateTool(value) && validateInput(value);
            expect(validateMerged(value), `${JSON.stringify(value)} against ${JSON.stringify(parametersOf(merged))}`).toBe(both);
          }
          // A property neither side declares is refused.
          expect(validateMerged({ zzz: 1 })).toBe(false);
        },
      ),
      settings,
    );
    if (settings.numRuns >= 20) expect(tally.merged).toBeGreaterThan(0);
  });

  it('merges without error whenever no shared property has conflicting types or disjoint enums', () => {
    fc.assert(
      fc.property(objectSchema, objectSchema, (tool, input) => {
        fc.pre(!hasConflict(tool, input));
        const toolSchema: ToolSchema = { ...structuredClone(tool) };
        expect(() => mergeDelegateContract(toolSchema, structuredClone(input), true)).not.toThrow();
      }),
      settings,
    );
  });
});
