/** Property tests of the MCP mappings (MCP-3, MCP-5, MCP-9, MCP-10): a Request's tool always has MCP's object schemas and carries input and output across unchanged; a server's tool always reaches its own server. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callResultOf, MCP_ACTIVITY, MCP_TARGET_PROPERTY, mcpToolSchema } from '../../src/mcp/mcp-tools.js';
import { requestTool, requestToolName, runInputOf, structuredContentOf } from '../../src/mcp/request-tool.js';
import type { JsonSchema } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(200);

const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const schemaArbitrary: fc.Arbitrary<JsonSchema | null> = fc.oneof(
  fc.constant(null),
  fc.constantFrom('string', 'number', 'array', 'boolean').map((type) => ({ type }) as JsonSchema),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.constant({ type: 'string' })).map((properties) => ({ type: 'object', properties }) as JsonSchema),
);
const MCP_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

describe('Requests as MCP tools (MCP-9, MCP-10)', () => {
  it('always gives a name MCP accepts, and leaves such a name as it is', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (name) => {
        const tool = requestToolName(name);
        expect(tool).toMatch(MCP_NAME);
        expect(requestToolName(tool)).toBe(tool);
        if (MCP_NAME.test(name)) expect(tool).toBe(name);
      }),
      config,
    );
  });

  it('always offers object schemas, and carries the input and the output across unchanged', () => {
    fc.assert(
      fc.property(
        schemaArbitrary,
        schemaArbitrary.filter((schema) => schema !== null),
        jsonValue,
        jsonValue,
        (input, output, given, produced) => {
          const tool = requestTool({ entry: { name: 'r', description: null, input, output: output as JsonSchema }, reference: '/r.json' });
          expect((tool.tool.inputSchema as { type?: unknown }).type).toBe('object');
          expect((tool.tool.outputSchema as { type?: unknown }).type).toBe('object');
          // What a client sends for the wrapped input is exactly the run's input.
          const args = tool.wrapsInput ? { input: given } : { value: given };
          expect(runInputOf(tool, args)).toEqual(tool.wrapsInput ? given : args);
          // The structured content is an object, and it holds the output exactly.
          const structured = structuredContentOf(tool, tool.wrapsOutput ? produced : { value: produced });
          expect(typeof structured).toBe('object');
          expect(tool.wrapsOutput ? structured.output : structured).toEqual(tool.wrapsOutput ? produced : { value: produced });
        },
      ),
      config,
    );
  });
});

describe("an MCP server's tools (MCP-3, MCP-5)", () => {
  it('always go to their own server and tool through the MCP Activity, keeping their parameters', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 8 }).filter((key) => !key.startsWith('_')),
          fc.constant({ type: 'number' }),
        ),
        (name, server, properties) => {
          const schema = mcpToolSchema({ name, inputSchema: { type: 'object', properties, required: Object.keys(properties) } }, server);
          expect(schema.properties?._activity).toEqual({ const: MCP_ACTIVITY });
          expect(schema.properties?.[MCP_TARGET_PROPERTY]).toEqual({ const: { server, tool: name } });
          for (const key of Object.keys(properties)) expect(schema.properties?.[key]).toEqual({ type: 'number' });
          expect(schema.required ?? []).toEqual(Object.keys(properties));
        },
      ),
      config,
    );
  });

  it('return structured content when there is some, else the text, else the parts', () => {
    const part = fc.oneof(
      fc.string().map((text) => ({ type: 'text' as const, text })),
      fc.constant({ type: 'image' as const, data: 'AA==', mimeType: 'image/png' }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 4 }), fc.option(fc.dictionary(fc.string(), jsonValue), { nil: undefined }), (content, structured) => {
        const result = callResultOf({ content, ...(structured === undefined ? {} : { structuredContent: structured }) });
        const texts = content.filter((item) => item.type === 'text').map((item) => (item as { text: string }).text);
        if (structured !== undefined) expect(result).toEqual(structured);
        else if (texts.length > 0 || content.length === 0) expect(result).toBe(texts.join('\n\n'));
        else expect(result).toEqual(content);
      }),
      config,
    );
  });
});
