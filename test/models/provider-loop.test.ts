/** The loop driven by the real providers (real SDKs against loopback wire servers): early calls from streams, re-asks, usage in the trace. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import type { Model } from '../../src/models/model.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { ModelRegistry } from '../../src/models/registry.js';
import { Runtime } from '../../src/protocol/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace.js';
import { anthropicStream, anthropicUsage } from './support/anthropic-wire.js';
import { deferred, pieces, startServer, type Handler, type LoopbackServer, type StreamScript } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const document = {
  meta: { name: 'looped' },
  context: [
    { type: 'system', text: 'Fetch, then answer.' },
    { type: 'tool', tool: { fetch: { description: 'Fetches.', properties: { what: { type: 'string' } }, required: ['what'] } } },
  ],
  schema: { type: 'string' },
};

const firstAnswer = JSON.stringify({
  calls: [
    { _tool: 'fetch', what: 'a' },
    { _tool: 'fetch', what: 'b' },
  ],
  output: null,
});
const finalAnswer = JSON.stringify({ calls: [], output: 'done' });

interface Provider {
  name: string;
  stream(text: string, script?: StreamScript): Handler;
  model(url: string): Model;
}

const registry = ModelRegistry.load({ env: {} });
const providers: Provider[] = [
  {
    name: 'OpenAI',
    stream: (text, script) => openAIStream(pieces(text, 7), openAIUsage(100, 20), script),
    model: (url) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url, registry, retry: { initialDelayMs: 1 } }),
  },
  {
    name: 'Anthropic',
    stream: (text, script) => anthropicStream(pieces(text, 7), anthropicUsage(100, 20), script),
    model: (url) => new AnthropicModel({ model: 'claude-haiku-4-5', env: { ANTHROPIC_API_KEY: 'k' }, baseUrl: url, registry, retry: { initialDelayMs: 1 } }),
  },
];

describe.each(providers)('the loop on $name', (provider) => {
  it('starts the first call while the answer is still streaming', async () => {
    const started = deferred();
    const held: StreamScript['held'] = { value: undefined };
    // The server sends the first call, then holds the rest of the answer until the Activity has started.
    const cut = Math.ceil(firstAnswer.indexOf('"b"') / 7) + 2;
    server = await startServer([
      provider.stream(firstAnswer, { holdAfter: cut, hold: started.promise, holdTimeoutMs: 5_000, held }),
      provider.stream(finalAnswer),
    ]);
    const runtime = new Runtime({
      activities: {
        fetch: (call) => {
          started.resolve();
          return `got ${String(call.what)}`;
        },
      },
    });
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('done');
    expect(held.value).toBe(true);
    const order = sink.events
      .filter((event) => event.event === 'call.started' || (event.event === 'model.response' && event.step === 0))
      .map((event) => event.event);
    expect(order[0]).toBe('call.started');
    expect(order).toContain('model.response');
    // Usage and cost of each answer reach the trace.
    const response = sink.events.find((event) => event.event === 'model.response');
    expect(response).toMatchObject({ usage: { outputTokens: 20 }, costUsd: expect.any(Number) });
  });

  it('re-asks a malformed answer with the validation errors, within the same step', async () => {
    server = await startServer([provider.stream('{"calls": [], "output": 42}'), provider.stream(finalAnswer)]);
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url) });
    expect(result.ok && result.output).toBe('done');
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]?.body)).toContain('does not match the Solution schema');
  });
});
