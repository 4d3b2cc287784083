/** A step without calls whose output is an object (MSG-32): both providers ask for the output schema itself, not the Solution wrapper, and read the answer as the output. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { OpenAIModel } from '../../src/models/openai.js';
import type { Model } from '../../src/protocol/model.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { JsonSchema } from '../../src/protocol/types.js';
import { anthropicStream, anthropicUsage } from './support/anthropic-wire.js';
import { pieces, startServer, type Handler, type LoopbackServer, type ReceivedRequest } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';
import { anthropicViolations, openAIViolations } from './support/provider-rules.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The output of the leaf: an object, one of whose constraints strict mode only describes (MSG-32 keeps the re-ask for it). */
const output = { type: 'object', properties: { text: { type: 'string', minLength: 3 } }, required: ['text'] };

const leaf = {
  meta: { name: 'leaf' },
  context: [
    { type: 'system', text: 'Summarize.' },
    { type: 'input', input: { task: 'Section 1.' } },
  ],
  schema: output,
};

const providers: {
  name: string;
  answer(json: string): Handler;
  model(url: string): Model;
  /** The schema the answer was asked for on the wire, and the name it went under. */
  sent(request: ReceivedRequest): { name: string; schema: JsonSchema; strict: boolean };
  violations(body: unknown): string[];
}[] = [
  {
    name: 'OpenAI',
    answer: (json) => openAIStream(pieces(json, 5), openAIUsage(10, 5)),
    model: (url) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url }),
    sent: ({ body }) => ({
      name: body.response_format.json_schema.name,
      schema: body.response_format.json_schema.schema,
      strict: body.response_format.json_schema.strict,
    }),
    violations: (body) => openAIViolations(body as Parameters<typeof openAIViolations>[0]),
  },
  {
    name: 'Anthropic',
    answer: (json) => anthropicStream(pieces(json, 5), anthropicUsage(10, 5)),
    model: (url) => new AnthropicModel({ model: 'claude-haiku-4-5', env: { ANTHROPIC_API_KEY: 'k' }, baseUrl: url }),
    sent: ({ body }) => {
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'solution' });
      return { name: body.tools[0].name, schema: body.tools[0].input_schema, strict: body.tools[0].strict === true };
    },
    violations: (body) => anthropicViolations(body as Parameters<typeof anthropicViolations>[0]),
  },
];

describe.each(providers)('an output object answered alone on $name (MSG-32)', (provider) => {
  it('sends the output schema itself, strict, and takes the answer as the output', async () => {
    server = await startServer([provider.answer('{"text":"A summary."}')]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(leaf), { model: provider.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toEqual({ text: 'A summary.' });
    const sent = provider.sent(server.requests[0]!);
    expect(sent.strict).toBe(true);
    expect(sent.schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
    // No Solution wrapper: neither an `output` property nor its null alternative.
    expect(JSON.stringify(sent.schema)).not.toContain('"output"');
    expect(JSON.stringify(sent.schema)).not.toContain('"null"');
    expect(provider.violations(server.requests[0]!.body)).toEqual([]);
    // The trace keeps the Solution: its schema as composed, the answer as {output}.
    const request = sink.events.find((event) => event.event === 'model.request');
    expect(request).toMatchObject({ schema: { properties: { output: { anyOf: [{ type: 'null' }, output] } } }, schemaForm: { form: 'strict' } });
    expect(sink.events.find((event) => event.event === 'model.response')).toMatchObject({ solution: { output: { text: 'A summary.' } } });
  });

  it('re-asks an answer that breaks the output schema, with the output schema again', async () => {
    server = await startServer([provider.answer('{"text":"no"}'), provider.answer('{"text":"A summary."}')]);
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(leaf), { model: provider.model(server.url) });
    expect(result.ok && result.output).toEqual({ text: 'A summary.' });
    expect(server.requests).toHaveLength(2);
    const again = server.requests[1]!;
    expect(JSON.stringify(again.body.messages)).toContain('does not match the Solution schema');
    expect(JSON.stringify(again.body.messages)).toContain('{\\"text\\":\\"no\\"}');
    expect(provider.sent(again).schema).toEqual(provider.sent(server.requests[0]!).schema);
  });

  it('keeps the Solution for tools, for an output that is not an object, and for an object strict mode cannot take whole', async () => {
    const tool = { type: 'tool', tool: { look: { type: 'object', properties: { q: { type: 'string' } } } } };
    for (const [document, answer] of [
      [{ ...leaf, context: [...leaf.context, tool] }, '{"calls":[],"output":{"text":"A summary."}}'],
      [{ ...leaf, schema: { type: 'array', items: { type: 'string' } } }, '{"output":["A summary."]}'],
      [{ ...leaf, schema: { type: 'object', patternProperties: { '^t': { type: 'string' } } } }, '{"output":"{\\"text\\":\\"A summary.\\"}"}'],
    ] as const) {
      server = await startServer([provider.answer(answer)]);
      const runtime = new Runtime();
      const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url) });
      expect(result.ok).toBe(true);
      const sent = provider.sent(server.requests[0]!);
      expect(sent.name).toBe('solution');
      expect(sent.schema).toMatchObject({ properties: { output: expect.anything() } });
      await server.close();
      server = undefined;
    }
  });
});
