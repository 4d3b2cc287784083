/** Tests of the OpenAI provider with the real SDK against a loopback server speaking chat completions (JSON and SSE). */
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, UsageError } from '../../src/protocol/errors.js';
import type { Call } from '../../src/protocol/types.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { OpenAIModel, type OpenAIModelOptions } from '../../src/models/openai.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import type { RetryEvent } from '../../src/models/retry.js';
import { deferred, pieces, redirectsTo, reset, startServer, within, type Handler, type LoopbackServer } from './support/loopback.js';
import { openAICompletion, openAIError, openAIStream, openAIStreamEvents, openAIUsage } from './support/openai-wire.js';
import { solutionSchema } from './support/solution-schema.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelFor(handlers: Handler[], options: Partial<OpenAIModelOptions> = {}): Promise<OpenAIModel> {
  server = await startServer(handlers);
  return new OpenAIModel({
    model: 'gpt-4.1-mini',
    env: { OPENAI_API_KEY: 'test-key' },
    baseUrl: server.url,
    retry: { initialDelayMs: 1, maxDelayMs: 50 },
    ...options,
  });
}

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    requestName: 'composer',
    step: 0,
    messages: [
      { role: 'system', content: 'You compose.' },
      { role: 'user', content: 'A ballad, please.' },
    ],
    schema: solutionSchema,
    config: {},
    ...extra,
  };
}

const twoCalls = {
  calls: [
    { _tool: 'synth', sound: 'piano', _outputPath: null },
    { _tool: 'mix', tracks: ['a', 'b'] },
  ],
  output: null,
};
const twoCallsMapped = {
  calls: [
    { _tool: 'synth', sound: 'piano' },
    { _tool: 'mix', tracks: ['a', 'b'] },
  ],
  output: null,
};

describe('OpenAIModel', () => {
  it('asks for a strict json_schema answer and maps the nulls of optional properties back', async () => {
    const model = await modelFor([openAICompletion(JSON.stringify(twoCalls))], { stream: false });
    const response = await model.generate(request({ config: { temperature: 0.2, maxTokens: 300 } }));
    expect(response.solution).toEqual(twoCallsMapped);
    expect(JSON.parse(response.text)).toEqual(twoCalls);
    const received = server!.requests[0]!;
    expect(received.path).toBe('/chat/completions');
    expect(received.headers.authorization).toBe('Bearer test-key');
    expect(received.body.model).toBe('gpt-4.1-mini');
    expect(received.body.messages).toEqual([
      { role: 'system', content: 'You compose.' },
      { role: 'user', content: 'A ballad, please.' },
    ]);
    expect(received.body.temperature).toBe(0.2);
    expect(received.body.max_tokens).toBe(300); // a custom base URL gets the classic field
    const format = received.body.response_format;
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.name).toBe('solution');
    expect(format.json_schema.strict).toBe(true);
    const synth = format.json_schema.schema.properties.calls.items.anyOf[0];
    expect(synth.required).toEqual(['_tool', 'sound', '_outputPath']);
    expect(synth.properties._outputPath).toEqual({ type: ['string', 'null'] });
    expect(synth.properties._tool).toEqual({ enum: ['synth'], type: 'string' });
  });

  it('stays strict, sending free-form parts as JSON-encoded strings, and decodes them on receipt (MODEL-14)', async () => {
    const schema = { type: 'object', properties: { calls: { type: 'array', items: { type: 'object' } }, output: {} }, required: ['calls', 'output'] };
    const model = await modelFor([openAIStream(['{"calls":["{\\"a\\": 1}"],"output":', '"{\\"free\\":true}"}'])]);
    const response = await model.generate(request({ schema }));
    expect(response.solution).toEqual({ calls: [{ a: 1 }], output: { free: true } });
    const sent = server!.requests[0]!.body.response_format.json_schema;
    expect(sent.strict).toBe(true);
    expect(sent.schema.properties.output).toEqual({ type: 'string', description: expect.stringContaining('JSON-encoded') });
    expect(response.schemaForm).toEqual({ form: 'strict', encoded: ['#/properties/calls/items', '#/properties/output'] });
  });

  it("delivers a streamed call whose free-form parameter travelled as a string decoded, as the delegate tool's output_schema does (MODEL-14)", async () => {
    const schema = {
      type: 'object',
      properties: {
        calls: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              _tool: { const: 'delegate' },
              task: { type: 'string' },
              output_schema: { type: 'object', description: 'A JSON Schema of the output.' },
            },
            required: ['_tool', 'task'],
          },
        },
        output: { type: ['string', 'null'] },
      },
      required: ['calls', 'output'],
    };
    const text = JSON.stringify({ calls: [{ _tool: 'delegate', task: 'sum', output_schema: '{"type": "number"}' }], output: null });
    const model = await modelFor([openAIStream(pieces(text, 9))]);
    const seen: Call[] = [];
    const response = await model.generate(request({ schema, onCall: (call) => seen.push(call) }));
    expect(server!.requests[0]!.body.response_format.json_schema.strict).toBe(true);
    expect(seen).toEqual([{ _tool: 'delegate', task: 'sum', output_schema: { type: 'number' } }]);
    expect(response.solution).toEqual({ calls: [{ _tool: 'delegate', task: 'sum', output_schema: { type: 'number' } }], output: null });
  });

  it('sends the original schema with strict: false past the depth limit, and says why and where (MODEL-16, MODEL-17)', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 11; level += 1) deep = { type: 'object', properties: { d: deep }, required: ['d'] };
    const schema = { type: 'object', properties: { calls: { type: 'array', maxItems: 0 }, output: deep }, required: ['calls', 'output'] };
    const model = await modelFor([openAIStream(['{"calls":[],"output":"v7"}'])]);
    const said = {
      form: 'non_strict',
      reason: expect.stringContaining('deeper than 10 levels'),
      pointer: expect.stringMatching(/^#\/properties\/output(\/properties\/d)+$/),
    };
    expect(model.schemaFormOf({ schema })).toEqual(said);
    const response = await model.generate(request({ schema }));
    expect(server!.requests[0]!.body.response_format.json_schema).toEqual({ name: 'solution', schema, strict: false });
    expect(response.schemaForm).toEqual(said);
  });

  it('stays strict past an enum limit, sending the enum encoded (MODEL-16)', async () => {
    const names = Array.from({ length: 1200 }, (_, index) => `v${index}`);
    const schema = { type: 'object', properties: { calls: { type: 'array', maxItems: 0 }, output: { enum: names } }, required: ['calls', 'output'] };
    const model = await modelFor([openAIStream(['{"calls":[],"output":"\\"v7\\""}'])]);
    const response = await model.generate(request({ schema }));
    expect(response.solution).toEqual({ calls: [], output: 'v7' });
    expect(server!.requests[0]!.body.response_format.json_schema.strict).toBe(true);
    expect(response.schemaForm).toEqual({ form: 'strict', encoded: ['#/properties/output'] });
  });

  it('streams: onCall for call 0 fires before the server sends the end of the answer', async () => {
    const text = JSON.stringify(twoCalls);
    const split = text.indexOf('},') + 2;
    const head = pieces(text.slice(0, split), 7);
    const tail = pieces(text.slice(split), 7);
    const firstCall = deferred();
    const held = { value: undefined as boolean | undefined };
    const model = await modelFor([openAIStream([...head, ...tail], openAIUsage(10, 5), { holdAfter: 1 + head.length, hold: firstCall.promise, held })]);
    const seen: Array<[Call, number]> = [];
    const response = await model.generate(
      request({
        onCall: (call, index) => {
          seen.push([call, index]);
          if (index === 0) firstCall.resolve();
        },
      }),
    );
    expect(held.value).toBe(true);
    expect(seen).toEqual([
      [twoCallsMapped.calls[0], 0],
      [twoCallsMapped.calls[1], 1],
    ]);
    expect(response.text).toBe(text);
    expect(response.solution).toEqual(twoCallsMapped);
    expect(server!.requests[0]!.body.stream).toBe(true);
    expect(server!.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('retries a 429, waiting as long as retry-after says, then succeeds', async () => {
    const retries: RetryEvent[] = [];
    const model = await modelFor([openAIError(429, 'Rate limit reached', { 'retry-after': '0.05' }), openAIStream([JSON.stringify(twoCalls)])], {
      retry: { initialDelayMs: 1, onRetry: (event) => retries.push(event) },
    });
    const started = Date.now();
    const response = await model.generate(request());
    expect(response.solution).toEqual(twoCallsMapped);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(retries).toEqual([expect.objectContaining({ retry: 1, delayMs: 50, status: 429 })]);
    expect(server!.requests).toHaveLength(2);
  });

  it('honours retry-after-ms and retries connection resets', async () => {
    const retries: RetryEvent[] = [];
    const model = await modelFor([openAIError(503, 'overloaded', { 'retry-after-ms': '20' }), reset(), openAICompletion('{"calls":[],"output":"ok"}')], {
      stream: false,
      retry: { initialDelayMs: 5, random: () => 0, onRetry: (event) => retries.push(event) },
    });
    const response = await model.generate(request());
    expect(response.solution).toEqual({ calls: [], output: 'ok' });
    expect(retries.map((event) => event.delayMs)).toEqual([20, 10]);
    expect(server!.requests).toHaveLength(3);
  });

  it('gives up after maxRetries 5xx answers with a model_error carrying the provider message', async () => {
    const model = await modelFor([openAIError(500, 'The server had an error')], { retry: { maxRetries: 2, initialDelayMs: 1 } });
    const error = await model.generate(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe('model_error');
    expect((error as ModelError).message).toContain('The server had an error');
    expect((error as ModelError).message).toContain('after 3 attempts');
    expect((error as ModelError).data).toMatchObject({ status: 500, attempts: 3 });
    expect(server!.requests).toHaveLength(3);
  });

  it('neither retries nor falls back on a 400 about something else than the response format', async () => {
    const model = await modelFor([openAIError(400, "Unsupported value: 'temperature' does not support 0.2 with this model.")]);
    await expect(model.generate(request({ config: { temperature: 0.2 } }))).rejects.toThrow(/does not support 0\.2/);
    expect(server!.requests).toHaveLength(1);
  });

  it('falls back to json_object with the schema in the prompt when the server refuses json_schema, and remembers it', async () => {
    const refusal = openAIError(400, "response_format 'json_schema' is not supported by this server");
    const model = await modelFor([refusal, openAIStream(['{"calls":[],"output":"one"}']), openAIStream(['{"calls":[],"output":"two"}'])]);
    const first = await model.generate(request());
    expect(first).toMatchObject({ solution: { calls: [], output: 'one' }, responseFormat: 'json_object' });
    const second = await model.generate(request());
    expect(second).toMatchObject({ solution: { calls: [], output: 'two' }, responseFormat: 'json_object' });
    const bodies = server!.requests.map((received) => received.body);
    expect(bodies.map((body) => body.response_format?.type)).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(bodies[0].messages[0].content).toBe('You compose.');
    expect(bodies[1].messages[0].content).toContain('You compose.\n\nAnswer with one JSON object and nothing else.');
    expect(bodies[1].messages[0].content).toContain(JSON.stringify(solutionSchema));
    expect(bodies[1].messages.slice(1)).toEqual(bodies[0].messages.slice(1));
  });

  it('falls back to plain text when json_object is refused too, and finds the JSON in prose around it', async () => {
    const model = await modelFor([
      openAIError(400, 'Invalid parameter: response_format of type json_schema is not supported with this model.'),
      openAIError(422, 'json_object response format not available'),
      openAIStream(['Sure! Here is the answer:\n', '```json\n{"calls":[],', '"output":"plain"}\n```\nAnything else?']),
    ]);
    const response = await model.generate(request());
    expect(response).toMatchObject({ solution: { calls: [], output: 'plain' }, responseFormat: 'text' });
    expect(server!.requests).toHaveLength(3);
    const last = server!.requests[2]!.body;
    expect(last.response_format).toBeUndefined();
    expect(last.messages[0].content).toContain(JSON.stringify(solutionSchema));
  });

  it('fails when even plain text is refused', async () => {
    const model = await modelFor([openAIError(400, 'response_format is not supported')]);
    await expect(model.generate(request())).rejects.toThrow(/response_format is not supported/);
    expect(server!.requests.map((received) => received.body.response_format?.type)).toEqual(['json_schema', 'json_object', undefined]);
  });

  it('does not retry a stream cut after calls were delivered', async () => {
    const text = JSON.stringify(twoCalls);
    const events = openAIStreamEvents([text.slice(0, text.indexOf('},') + 2)]);
    const cut: Handler = async (_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(events[0]);
      response.write(events[1]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.socket?.destroy();
    };
    const model = await modelFor([cut, openAIStream([text])]);
    const seen: number[] = [];
    const error = await model.generate(request({ onCall: (_, index) => seen.push(index) })).catch((e: unknown) => e);
    expect(seen).toEqual([0]);
    expect(error).toBeInstanceOf(ModelError);
    expect(server!.requests).toHaveLength(1);
  });

  it('rejects promptly with an AbortError when aborted mid-stream, and closes the connection', async () => {
    const text = JSON.stringify(twoCalls);
    const head = text.slice(0, text.indexOf('},') + 2);
    const model = await modelFor([openAIStream([head, text.slice(head.length)], undefined, { holdAfter: 2, hang: true })]);
    const controller = new AbortController();
    const started = Date.now();
    const pending = model.generate(request({ signal: controller.signal, onCall: () => controller.abort() }));
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await within(server!.requests[0]!.closed, 1_000)).toBe(true);
  });

  it('cancels a backoff sleep when aborted', async () => {
    const model = await modelFor([openAIError(429, 'slow down', { 'retry-after': '10' })], { retry: { maxDelayMs: 10_000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('normalises usage (uncached input, cached, reasoning) and prices it with the registry', async () => {
    const registry = new ModelCatalog({ models: { 'openai:gpt-4.1-mini': { tier: 'fast', price: { input: 0.4, output: 1.6, cacheRead: 0.1 } } } });
    const model = await modelFor([openAIStream(['{"calls":[],"output":"x"}'], openAIUsage(1000, 200, 3000, 50))], { registry });
    const response = await model.generate(request());
    expect(response.usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 3000, cacheWriteTokens: 0, reasoningTokens: 50 });
    expect(response.costUsd).toBeCloseTo((1000 * 0.4 + 200 * 1.6 + 3000 * 0.1) / 1e6, 12);
    expect(response.model).toBe('openai:gpt-4.1-mini-2025-04-14');
  });

  it('follows a server that redirects the request elsewhere, sending the whole body again (MODEL-10)', async () => {
    const model = await modelFor([redirectsTo('/moved/chat/completions', 307, openAICompletion(JSON.stringify(twoCalls)))], { stream: false });
    expect((await model.generate(request())).solution).toEqual(twoCallsMapped);
    const answered = server!.requests.at(-1)!;
    expect(answered.path).toBe('/moved/chat/completions');
    expect(answered.body).toEqual(server!.requests[0]!.body);
    expect(answered.body.messages.length).toBeGreaterThan(0);
  });

  it('reads OPENAI_BASE_URL, needs no key for a custom server, and requires one for the official API', async () => {
    server = await startServer([openAICompletion('{"calls":[],"output":"local"}')]);
    const model = new OpenAIModel({ model: 'llama3.2', env: { OPENAI_BASE_URL: server.url }, stream: false });
    expect((await model.generate(request())).solution).toEqual({ calls: [], output: 'local' });
    expect(() => new OpenAIModel({ model: 'gpt-4.1-mini', env: {} })).toThrow(UsageError);
    expect(() => new OpenAIModel({ model: 'gpt-4.1-mini', env: {} })).toThrow(/OPENAI_API_KEY/);
  });
});
