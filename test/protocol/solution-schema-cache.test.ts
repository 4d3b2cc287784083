/** Unit tests of src/protocol/run/solution-schema-cache.ts: one Solution schema object per distinct composition (MSG-26). */
import { describe, expect, it } from 'vitest';
import { memorySink, ReplayModel, Runtime, Tracer } from '../../src/index.js';
import { SolutionSchemaCache, type SolutionInputs } from '../../src/protocol/run/solution-schema-cache.js';
import { composeSolutionSchema } from '../../src/protocol/tools/tools.js';
import type { ToolSchema } from '../../src/protocol/types.js';

const none = () => false;

function inputs(tools: Record<string, ToolSchema>, overrides: Partial<SolutionInputs> = {}): SolutionInputs {
  return {
    tools: new Map(Object.entries(tools)),
    outputSchema: { type: 'string' },
    hasActivity: none,
    extraProperties: {},
    instances: [],
    planning: false,
    additions: {},
    ...overrides,
  };
}

describe('SolutionSchemaCache (MSG-26)', () => {
  it('gives equal inputs one schema object, equal to the one composed afresh', () => {
    const cache = new SolutionSchemaCache();
    const first = cache.schemaFor(inputs({ fetch: { properties: { url: { type: 'string' } } } }));
    const second = cache.schemaFor(inputs({ fetch: { properties: { url: { type: 'string' } } } }));
    expect(second).toBe(first);
    expect(first).toEqual(composeSolutionSchema(new Map([['fetch', { properties: { url: { type: 'string' } } }]]), { type: 'string' }, none));
  });

  it('composes anew when anything the schema depends on differs', () => {
    const cache = new SolutionSchemaCache();
    const tools = { fetch: { properties: { url: { type: 'string' } }, _output: { type: 'string' } } };
    const base = cache.schemaFor(inputs(tools));
    const variants = [
      inputs({ fetch: { properties: { url: { type: 'integer' } }, _output: { type: 'string' } } }),
      inputs(tools, { outputSchema: { type: 'number' } }),
      inputs(tools, { hasActivity: (name) => name === 'fetch' }),
      inputs(tools, { instances: ['fr'] }),
      inputs(tools, { planning: true }),
      inputs(tools, { extraProperties: { meta: { type: 'object' } } }),
    ];
    for (const variant of variants) {
      const schema = cache.schemaFor(variant);
      expect(schema).not.toBe(base);
      const { tools: map, outputSchema, hasActivity, extraProperties, instances, planning, additions } = variant;
      expect(schema).toEqual(composeSolutionSchema(map, outputSchema, hasActivity, extraProperties, instances, planning, additions));
    }
  });

  it('shares the schema between the runs of one runtime', async () => {
    const runtime = new Runtime();
    const document = runtime.validate({ meta: { name: 'leaf' }, context: [{ type: 'system', text: 'Answer.' }], schema: { type: 'string' } });
    const model = new ReplayModel([{ solution: { output: 'done' }, repeat: true }]);
    const sink = memorySink();
    for (let i = 0; i < 2; i++) expect((await runtime.run(document, { model, tracer: new Tracer([sink]) })).ok).toBe(true);
    const schemas = sink.events.filter((event) => event.event === 'model.request').map((event) => (event as unknown as { schema: unknown }).schema);
    expect(schemas).toHaveLength(2);
    expect(schemas[1]).toBe(schemas[0]);
  });
});
