/** A Request whose answer is nothing but free text (MSG-28): both providers ask for plain text, with no response format or solution tool, and its text is the output. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { OpenAIModel } from '../../src/models/openai.js';
import type { Model } from '../../src/protocol/model.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { anthropicStream, anthropicTextStream, anthropicUsage } from './support/anthropic-wire.js';
import { pieces, startServer, type Handler, type LoopbackServer } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const leaf = {
  meta: { name: 'leaf' },
  context: [
    { type: 'system', text: 'Summarize.' },
    { type: 'input', input: { task: 'Section 1.' } },
  ],
  schema: { type: 'string' },
};

/** Text that looks like a Solution: in plain text it is the output as written, never parsed. */
const answer = '{"output": "not parsed"} and more';

const providers: { name: string; text(text: string): Handler; json(text: string): Handler; model(url: string): Model }[] = [
  {
    name: 'OpenAI',
    text: (text) => openAIStream(pieces(text, 5), openAIUsage(10, 5)),
    json: (text) => openAIStream(pieces(text, 5), openAIUsage(10, 5)),
    model: (url) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url }),
  },
  {
    name: 'Anthropic',
    text: (text) => anthropicTextStream(pieces(text, 5), anthropicUsage(10, 5)),
    json: (text) => anthropicStream(pieces(text, 5), anthropicUsage(10, 5)),
    model: (url) => new AnthropicModel({ model: 'claude-haiku-4-5', env: { ANTHROPIC_API_KEY: 'k' }, baseUrl: url }),
  },
];

describe.each(providers)('a plain-text answer on $name (MSG-28)', (provider) => {
  it('asks without a response format or solution tool and takes the text, as written, as the output', async () => {
    server = await startServer([provider.text(answer)]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(leaf), { model: provider.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe(answer);
    const body = server.requests[0]!.body;
    expect(body.response_format).toBeUndefined();
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('"output"');
    expect(sink.events.find((event) => event.event === 'model.response')).toMatchObject({
      solution: { output: answer },
      responseFormat: 'plain_text',
    });
  });

  it('keeps the Solution as JSON when the string output is constrained or described', async () => {
    for (const schema of [
      { type: 'string', minLength: 2 },
      { type: 'string', description: 'One sentence.' },
    ]) {
      server = await startServer([provider.json('{"output":"ok"}')]);
      const runtime = new Runtime();
      const result = await runtime.run(runtime.validate({ ...leaf, schema }), { model: provider.model(server.url) });
      expect(result.ok && result.output).toBe('ok');
      const body = server.requests[0]!.body;
      if (provider.name === 'OpenAI') expect(body.response_format.json_schema.strict).toBe(true);
      else expect(body.tool_choice).toEqual({ type: 'tool', name: 'solution' });
      await server.close();
      server = undefined;
    }
  });
});
