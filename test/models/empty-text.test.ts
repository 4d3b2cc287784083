/** Empty texts are dropped before sending, for every provider alike (MSG-31): real SDKs against loopback servers that answer as the providers do. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { OpenAIModel } from '../../src/models/openai.js';
import type { Model } from '../../src/protocol/model.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { anthropicError, anthropicStream, anthropicTextStream } from './support/anthropic-wire.js';
import { startServer, type Handler, type LoopbackServer, type ReceivedRequest } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A document whose context holds an empty system text, an empty user turn and a blank one beside the real question; its answer is plain text (MSG-28). */
const document = {
  meta: { name: 'empty-texts' },
  context: [
    { type: 'system', text: '' },
    { type: 'system', text: 'Answer briefly.' },
    { type: 'user', text: '' },
    { type: 'text', role: 'user', text: '  \n' },
    { type: 'user', text: 'Say done.' },
  ],
  schema: { type: 'string' },
};

/** Every text the request carries: OpenAI's message contents, Anthropic's system blocks and message contents (strings or text blocks). */
function textsOf(request: ReceivedRequest): string[] {
  const body = request.body as { system?: Array<{ text: string }>; messages: Array<{ content: string | Array<{ type: string; text?: string }> }> };
  const texts = (body.system ?? []).map((block) => block.text);
  for (const message of body.messages) {
    if (typeof message.content === 'string') texts.push(message.content);
    else for (const block of message.content) if (block.type === 'text') texts.push(block.text ?? '');
  }
  return texts;
}

/** Answers as Anthropic does: a 400 for a request holding an empty or blank text block, else the final answer. */
const anthropicAnswer: Handler = (request, response) => {
  const texts = textsOf(request);
  if (texts.some((text) => text === '')) return anthropicError(400, 'messages: text content blocks must be non-empty')(request, response);
  if (texts.some((text) => text.trim() === '')) return anthropicError(400, 'messages: text content blocks must contain non-whitespace text')(request, response);
  return anthropicTextStream(['do', 'ne'])(request, response);
};

const registry = ModelCatalog.load({ env: {} });
const providers: Array<{ name: string; answer: Handler; model(url: string): Model }> = [
  {
    name: 'OpenAI',
    // OpenAI accepts an empty message; what matters is that it is sent the same conversation.
    answer: openAIStream(['do', 'ne'], openAIUsage(100, 20)),
    model: (url) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url, registry, retry: { initialDelayMs: 1 } }),
  },
  {
    name: 'Anthropic',
    answer: anthropicAnswer,
    model: (url) => new AnthropicModel({ model: 'claude-haiku-4-5', env: { ANTHROPIC_API_KEY: 'k' }, baseUrl: url, registry, retry: { initialDelayMs: 1 } }),
  },
];

describe.each(providers)('empty texts on $name (MSG-31)', (provider) => {
  it('runs a document with empty and blank texts: they are not sent, and the trace shows what was', async () => {
    server = await startServer([provider.answer]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok ? result.output : result.error).toBe('done');
    expect(server.requests).toHaveLength(1);
    const texts = textsOf(server.requests[0] as ReceivedRequest);
    expect(texts.filter((text) => text.trim() === '')).toEqual([]);
    expect(texts).toEqual(expect.arrayContaining(['Answer briefly.', 'Say done.']));
    // MSG-18: the traced messages are exactly those sent.
    const request = sink.events.find((event) => event.event === 'model.request') as { messages: Array<{ role: string; content: string }> } | undefined;
    expect(request?.messages.map((message) => message.content)).toEqual(['Answer briefly.', 'Say done.']);
  });

  it('still asks for an answer when every text of the context is empty', async () => {
    server = await startServer([provider.answer]);
    const runtime = new Runtime();
    const empty = {
      ...document,
      context: [
        { type: 'system', text: '' },
        { type: 'user', text: '' },
      ],
    };
    const result = await runtime.run(runtime.validate(empty), { model: provider.model(server.url) });
    expect(result.ok ? result.output : result.error).toBe('done');
    expect(textsOf(server.requests[0] as ReceivedRequest).filter((text) => text.trim() === '')).toEqual([]);
  });
});

describe('an empty answer re-asked (MSG-31)', () => {
  it('is not sent back as an empty assistant turn, which Anthropic would refuse', async () => {
    // The first answer is empty text, no solution tool: unusable, so it is re-asked.
    server = await startServer([
      anthropicTextStream([]),
      (request, response) => {
        const texts = textsOf(request);
        if (texts.some((text) => text.trim() === '')) return anthropicError(400, 'messages: text content blocks must be non-empty')(request, response);
        // The output object itself is the solution tool's input (MSG-32).
        return anthropicStream([JSON.stringify({ done: true })])(request, response);
      },
    ]);
    const runtime = new Runtime();
    const sink = memorySink();
    const asked = { ...document, schema: { type: 'object', properties: { done: { type: 'boolean' } }, required: ['done'] } };
    const model = new AnthropicModel({
      model: 'claude-haiku-4-5',
      env: { ANTHROPIC_API_KEY: 'k' },
      baseUrl: server.url,
      registry,
      retry: { initialDelayMs: 1 },
    });
    const result = await runtime.run(runtime.validate(asked), { model, tracer: new Tracer([sink]) });
    expect(result.ok ? result.output : result.error).toEqual({ done: true });
    expect(server.requests).toHaveLength(2);
    // MSG-18: the re-ask the trace shows is the one sent, without the empty answer.
    const requests = sink.events.filter((event) => event.event === 'model.request') as unknown as Array<{ messages: Array<{ role: string; content: string }> }>;
    expect(requests[1]?.messages.map((message) => message.role)).not.toContain('assistant');
  });
});
