/** The loop driven by the real providers (real SDKs against loopback wire servers): early calls from streams, re-asks, usage in the trace. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import type { Model } from '../../src/protocol/model.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { anthropicError, anthropicStream, anthropicStreamEvents, anthropicUsage } from './support/anthropic-wire.js';
import { deferred, pieces, sse, startServer, type Handler, type LoopbackServer, type StreamScript } from './support/loopback.js';
import { openAIError, openAIStream, openAIStreamEvents, openAIUsage } from './support/openai-wire.js';

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
  /** A streamed answer cut at the length limit. */
  cut(text: string): Handler;
  /** A transient failure (overloaded). */
  overloaded: Handler;
  model(url: string): Model;
}

const registry = ModelCatalog.load({ env: {} });
const providers: Provider[] = [
  {
    name: 'OpenAI',
    stream: (text, script) => openAIStream(pieces(text, 7), openAIUsage(100, 20), script),
    cut: (text) => sse(openAIStreamEvents(pieces(text, 7), openAIUsage(100, 20), 'gpt-4.1-mini', 'length')),
    overloaded: openAIError(503, 'The server is overloaded.'),
    model: (url) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url, registry, retry: { initialDelayMs: 1 } }),
  },
  {
    name: 'Anthropic',
    stream: (text, script) => anthropicStream(pieces(text, 7), anthropicUsage(100, 20), script),
    cut: (text) => sse(anthropicStreamEvents(pieces(text, 7), anthropicUsage(100, 20), 'claude-haiku-4-5', 'max_tokens')),
    overloaded: anthropicError(529, 'Overloaded'),
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
  it('sends a chat message whose content is a message (act 001) as the text its type renders, a user turn (MSG-20)', async () => {
    server = await startServer([provider.stream(finalAnswer)]);
    const runtime = new Runtime();
    const chat = {
      ...document,
      context: [...document.context, { role: 'user', content: { type: 'input', input: { city: 'PARIS-CITY' } } }],
    };
    const result = await runtime.run(runtime.validate(chat), { model: provider.model(server.url) });
    expect(result.ok && result.output).toBe('done');
    const sent = (server.requests[0]!.body.messages as { role: string; content: unknown }[]).filter((message) =>
      JSON.stringify(message).includes('PARIS-CITY'),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]?.role).toBe('user');
    expect(typeof sent[0]?.content).toBe('string');
    // The input is the prompt's only block: its values alone (MSG-33).
    expect(sent[0]?.content).toBe('{"city":"PARIS-CITY"}');
  });

  it('traces each retry as model.retry {step, attempt, reason, waitMs} and goes on', async () => {
    server = await startServer([provider.overloaded, provider.stream(finalAnswer)]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('done');
    const retries = sink.events.filter((event) => event.event === 'model.retry');
    expect(retries).toHaveLength(1);
    const { ts: _ts, run: _run, ...fields } = retries[0]!;
    expect(fields).toEqual({
      event: 'model.retry',
      parent: null,
      depth: 0,
      step: 0,
      attempt: 1,
      reason: expect.stringMatching(/overloaded/i),
      waitMs: expect.any(Number),
    });
    const order = sink.events.map((event) => event.event).filter((name) => name.startsWith('model.'));
    expect(order).toEqual(['model.request', 'model.retry', 'model.response']);
  });

  it('fails the run with max_tokens_exceeded when the answer is cut at the length limit, without a re-ask', async () => {
    server = await startServer([provider.cut(firstAnswer.slice(0, 30)), provider.stream(finalAnswer)]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate({ ...document, config: { maxTokens: 64 } }), {
      model: provider.model(server.url),
      tracer: new Tracer([sink]),
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('max_tokens_exceeded');
    expect(sink.events.at(-1)).toMatchObject({ event: 'run.failed', code: 'max_tokens_exceeded', message: expect.stringContaining('64 output tokens') });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['a call that fails its tool schema, nor any after it', JSON.stringify({ calls: [{ _tool: 'fetch' }, { _tool: 'fetch', what: 'b' }], output: null })],
    ['any call after an output that already fails the schema', '{"output": 42, "calls": [{"_tool": "fetch", "what": "a"}]}'],
  ])('starts no streamed call of an invalid answer: %s', async (_, invalid) => {
    server = await startServer([provider.stream(invalid), provider.stream(finalAnswer)]);
    const fetched: unknown[] = [];
    const runtime = new Runtime({ activities: { fetch: (call) => fetched.push(call.what) } });
    const result = await runtime.run(runtime.validate(document), { model: provider.model(server.url) });
    expect(result.ok && result.output).toBe('done');
    expect(fetched).toEqual([]);
    expect(server.requests).toHaveLength(2);
  });
});

describe('the loop on OpenAI: what the server is sent', () => {
  const openAI = providers[0]!;

  /** A Request without tools whose output is structured: its answer is JSON, in strict mode, the output object itself (MSG-32). */
  const jsonLeaf = {
    meta: { name: 'leaf' },
    context: [{ type: 'system', text: 'Answer.' }],
    schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
  };
  const leafAnswer = { answer: 'done' };
  /** A Request without tools whose output is a list: its answer is the Solution `{"output": [...]}` (MSG-32 is for objects). */
  const listLeaf = { ...jsonLeaf, schema: { type: 'array', items: { type: 'string' } } };
  const listAnswer = ['done'];

  it('asks in strict mode for a Request without tools, with no call machinery and no instruction of its own (TOOL-22, MSG-27, MSG-32)', async () => {
    server = await startServer([openAI.stream(JSON.stringify(leafAnswer))]);
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(jsonLeaf), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toEqual(leafAnswer);
    const body = server.requests[0]!.body;
    expect(body.response_format.json_schema.strict).toBe(true);
    expect(body.response_format.json_schema.schema).toEqual({ ...jsonLeaf.schema, additionalProperties: false });
    const prompt = JSON.stringify(body.messages);
    expect(prompt).not.toContain('calls');
    expect(prompt).not.toContain('_outputPath');
    // The schema is in response_format; the prompt does not say it again (MSG-27).
    expect(body.messages).toEqual([{ role: 'system', content: 'Answer.' }]);
  });

  it('still takes a tool-less answer that writes an empty calls list (answers recorded before TOOL-22)', async () => {
    server = await startServer([openAI.stream(JSON.stringify({ calls: [], output: listAnswer }))]);
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(listLeaf), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toEqual(listAnswer);
  });

  it('re-asks a tool-less answer that makes calls (TOOL-22, LOOP-8)', async () => {
    const calling = JSON.stringify({ calls: [{ _tool: 'search', q: 'x' }], output: listAnswer });
    server = await startServer([openAI.stream(calling), openAI.stream(JSON.stringify({ output: listAnswer }))]);
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(listLeaf), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toEqual(listAnswer);
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]!.body.messages)).toContain('does not match the Solution schema');
  });

  it('says what the call meta-properties mean once, in the instructions, not in every tool of the schema (MSG-29)', async () => {
    server = await startServer([openAI.stream(finalAnswer)]);
    const runtime = new Runtime({ activities: { fetch: () => 'x', store: () => 'y' } });
    const twoTools = {
      ...document,
      context: [...document.context, { type: 'tool', tool: { store: { description: 'Stores.', properties: { what: { type: 'string' } } } } }],
    };
    const result = await runtime.run(runtime.validate(twoTools), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toBe('done');
    const body = server.requests[0]!.body;
    expect(body.response_format.json_schema.strict).toBe(true);
    const tools = body.response_format.json_schema.schema.properties.calls.items.anyOf as { properties: Record<string, { description?: string }> }[];
    expect(tools).toHaveLength(2);
    for (const tool of tools) {
      for (const key of ['_reasoningForCall', '_outputMethod']) expect(tool.properties[key]?.description).toBeUndefined();
      // Only the strict form's note of the pattern, which it cannot send as a keyword (MODEL-7).
      expect(tool.properties._outputPath?.description).toBe('Matches the regular expression "^†".');
    }
    const instructions = body.messages[0].content as string;
    for (const key of ['"_outputPath"', '"_outputMethod"', '"_reasoningForCall"', '"_tool"', '†reference']) expect(instructions).toContain(key);
    // The answer's form is the Solution schema's to say, not the instructions' (MSG-24).
    expect(instructions).not.toContain('{"calls": [...], "output": ...}');
  });

  it('sends a context that renders nothing as one short user turn, since a provider needs a message (MSG-27)', async () => {
    server = await startServer([openAI.stream(JSON.stringify(leafAnswer))]);
    const runtime = new Runtime();
    const empty = { meta: { name: 'empty' }, context: [{ type: 'input', schema: { type: 'object' } }], schema: jsonLeaf.schema };
    const result = await runtime.run(runtime.validate(empty), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toEqual(leafAnswer);
    expect(server.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'Answer.' }]);
  });

  it('says minLength in the description instead of sending it, and enforces it by re-asking', async () => {
    const strictTool = {
      ...document,
      context: [
        document.context[0]!,
        { type: 'tool', tool: { fetch: { description: 'Fetches.', properties: { what: { type: 'string', minLength: 3 } }, required: ['what'] } } },
      ],
    };
    const tooShort = JSON.stringify({ calls: [{ _tool: 'fetch', what: 'a' }], output: null });
    server = await startServer([openAI.stream(tooShort), openAI.stream(finalAnswer)]);
    const fetched: unknown[] = [];
    const runtime = new Runtime({ activities: { fetch: (call) => fetched.push(call.what) } });
    const result = await runtime.run(runtime.validate(strictTool), { model: openAI.model(server.url) });
    expect(result.ok && result.output).toBe('done');
    const sent = JSON.stringify(server.requests[0]!.body.response_format);
    expect(server.requests[0]!.body.response_format.json_schema.strict).toBe(true);
    expect(sent).not.toContain('minLength');
    expect(sent).toContain('At least 3 characters.');
    expect(fetched).toEqual([]);
    expect(JSON.stringify(server.requests[1]!.body.messages)).toContain('does not match the Solution schema');
  });

  it('traces the response format each answer was asked with, after falling back', async () => {
    server = await startServer([openAIError(400, "'response_format' of type 'json_schema' is not supported"), openAI.stream(finalAnswer)]);
    const runtime = new Runtime();
    const sink = memorySink();
    const result = await runtime.run(runtime.validate(document), { model: openAI.model(server.url), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('done');
    expect(sink.events.find((event) => event.event === 'model.response')).toMatchObject({ responseFormat: 'json_object' });
  });
});
