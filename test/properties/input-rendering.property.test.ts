/** Properties of the prompt economy of input rendering (MSG-24, MSG-25): the schema is left out only when the values show all of it, and the values always read back. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateAgainst } from '../../src/protocol/schemas.js';
import { render } from '../helpers/builtin-messages.js';

const leaf = fc.constantFrom<Record<string, unknown>>(
  { type: 'string' },
  { type: 'integer' },
  { type: 'boolean' },
  { type: 'string', description: 'What it is.' },
  { enum: ['a', 'b'] },
  { type: 'number', title: 'A number' },
);
const schemas = fc
  .record({ properties: fc.dictionary(fc.constantFrom('a', 'b', 'description', 'title'), leaf, { maxKeys: 3 }), required: fc.boolean() })
  .map(({ properties, required }) => ({ type: 'object', properties, ...(required ? { required: Object.keys(properties) } : {}) }));
const values = fc.dictionary(
  fc.constantFrom('a', 'b', 'description', 'title'),
  fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean(), fc.constantFrom('a', 'b')),
  {
    maxKeys: 3,
  },
);

describe('input rendering (MSG-24, MSG-25)', () => {
  it('leaves the schema out only when the values match it, have exactly the properties it names and it carries no annotation, and shows the values as compact JSON', () => {
    fc.assert(
      fc.property(schemas, values, (schema, input) => {
        const content = render({ type: 'input', input, schema }).messages[0]?.content ?? '';
        expect(content.split('\n')).toContain(JSON.stringify(input));
        const annotated = JSON.stringify(Object.values(schema.properties)).match(/"(description|title)":/) !== null;
        const shown = content.includes(JSON.stringify(schema));
        const named = Object.keys(schema.properties).sort().join();
        const renamed = named !== Object.keys(input).sort().join();
        expect(shown).toBe(annotated || renamed || validateAgainst(schema, input).length > 0);
      }),
    );
  });
});
