/** Property test of TOOL-6 and TOOL-23: whatever a parameter's schema, the model may write exactly its own values or a †reference, whether or not the reference alternative is shown. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/protocol/schemas.js';
import { modelToolSchema } from '../../src/protocol/tools/tools.js';
import type { JsonSchema } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(200);

/** Parameter schemas: plain and annotated strings (shown as they are) and constrained ones or other types (shown with the alternative). */
const parameterSchemas: fc.Arbitrary<JsonSchema> = fc.oneof(
  fc.constant({ type: 'string' }),
  fc.record({ type: fc.constant('string'), description: fc.string() }),
  fc.record({ type: fc.constant('string'), title: fc.string(), examples: fc.array(fc.string(), { maxLength: 2 }) }),
  fc.record({ type: fc.constant('string'), maxLength: fc.nat(6) }),
  fc.record({ type: fc.constant('string'), pattern: fc.constantFrom('^[a-z]+$', '^x') }),
  fc.record({ type: fc.constant('string'), enum: fc.uniqueArray(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 3 }) }),
  fc.constant({ type: 'integer' }),
);

/** Values a model might write: short strings, references, numbers. */
const values: fc.Arbitrary<string | number> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ maxLength: 8 }).map((path) => `†${path}`),
  fc.integer(),
);

describe('a parameter as the model sees it (TOOL-6, TOOL-23)', () => {
  it('accepts exactly the values of its own schema and the †references', () => {
    fc.assert(
      fc.property(parameterSchemas, values, (schema, value) => {
        const shown = compileSchema(modelToolSchema('work', { type: 'object', properties: { p: schema } }, true));
        const own = compileSchema(schema);
        const isReference = typeof value === 'string' && value.startsWith('†');
        const expected = isReference || own(value);
        expect(shown({ _tool: 'work', p: value })).toBe(expected);
      }),
      settings,
    );
  });
});
