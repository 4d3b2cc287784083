/** Tests of the Anthropic provider with the real SDK against a loopback server speaking the messages API (JSON and SSE). */
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, UsageError } from '../../src/protocol/errors.js';
import type { Call } from '../../src/protocol/types.js';
import { AnthropicModel, type AnthropicModelOptions } from '../../src/models/anthropic.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import type { RetryEvent } from '../../src/models/retry.js';
import { anthropicError, anthropicMessage, anthropicStream, anthropicUsage } from './support/anthropic-wire.js';
import { deferred, pieces, redirectsTo, reset, startServer, within, type Handler, type LoopbackServer } from './support/loopback.js';
import { toStrictSchema } from '../../src/models/strict-schema.js';
import { solutionSchema } from './support/solution-schema.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelFor(handlers: Handler[], options: Partial<AnthropicModelOptions> = {}): Promise<AnthropicModel> {
  server = await startServer(handlers);
  return new AnthropicModel({
    model: 'claude-haiku-4-5',
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url },
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
      { role: 'system', content: 'Answer briefly.' },
    ],
    schema: solutionSchema,
    config: {},
    ...extra,
  };
}

const twoCalls = {
  calls: [
    { _tool: 'synth', sound: 'piano' },
    { _tool: 'mix', tracks: ['a', 'b'] },
  ],
  output: null,
};

describe('AnthropicModel', () => {
  it('follows a server that redirects the request elsewhere, sending the whole body again (MODEL-10)', async () => {
    const model = await modelFor([redirectsTo('/moved/v1/messages', 308, anthropicMessage(twoCalls))], { stream: false });
    expect((await model.generate(request())).solution).toEqual(twoCalls);
    const answered = server!.requests.at(-1)!;
    expect(answered.path).toBe('/moved/v1/messages');
    expect(answered.body).toEqual(server!.requests[0]!.body);
    expect(answered.body.messages.length).toBeGreaterThan(0);
  });

  it('forces the solution tool with the Solution schema as input_schema and puts system messages in system', async () => {
    const model = await modelFor([anthropicMessage(twoCalls)], { stream: false });
    const response = await model.generate(request({ config: { maxTokens: 500 } }));
    expect(response.solution).toEqual(twoCalls);
    expect(JSON.parse(response.text)).toEqual(twoCalls);
    const received = server!.requests[0]!;
    expect(received.path).toBe('/v1/messages');
    // The SDK sends the key as x-api-key or, in recent versions, as a bearer token.
    expect([received.headers['x-api-key'], received.headers.authorization]).toContain(received.headers['x-api-key'] ? 'test-key' : 'Bearer test-key');
    expect(received.body.model).toBe('claude-haiku-4-5');
    expect(received.body.max_tokens).toBe(500);
    // Strict where the schema fits Anthropic's strict subset (MODEL-15).
    expect(received.body.tools).toEqual([
      expect.objectContaining({ name: 'solution', input_schema: toStrictSchema(solutionSchema, 'anthropic').schema, strict: true }),
    ]);
    expect(response.schemaForm).toEqual({ form: 'strict' });
    expect(received.body.tool_choice).toEqual({ type: 'tool', name: 'solution' });
    expect(received.body.system).toEqual([
      { type: 'text', text: 'You compose.' },
      { type: 'text', text: 'Answer briefly.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(received.body.messages).toEqual([{ role: 'user', content: 'A ballad, please.' }]);
  });

  it('asks again without strict, for good, when the server refuses strict tools (MODEL-15)', async () => {
    const model = await modelFor([anthropicError(400, 'tools.0.custom.strict: Extra inputs are not permitted'), anthropicMessage(twoCalls)], { stream: false });
    const response = await model.generate(request());
    expect(response.solution).toEqual(twoCalls);
    expect(server!.requests.map((received) => received.body.tools[0].strict)).toEqual([true, undefined]);
    expect(server!.requests[1]!.body.tools[0].input_schema).toEqual(solutionSchema);
    expect(response.schemaForm).toEqual({ form: 'non_strict', reason: expect.stringContaining('the server refused a strict tool') });
    expect(model.schemaFormOf({ schema: solutionSchema })).toMatchObject({ form: 'non_strict' });
  });

  it('streams: onCall for call 0 fires before the server sends the end of the tool input', async () => {
    const text = JSON.stringify(twoCalls);
    const split = text.indexOf('},') + 2;
    const head = pieces(text.slice(0, split), 5);
    const tail = pieces(text.slice(split), 5);
    const firstCall = deferred();
    const held = { value: undefined as boolean | undefined };
    // Events before the first delta: message_start, content_block_start, ping.
    const model = await modelFor([anthropicStream([...head, ...tail], anthropicUsage(10, 5), { holdAfter: 3 + head.length, hold: firstCall.promise, held })]);
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
      [twoCalls.calls[0], 0],
      [twoCalls.calls[1], 1],
    ]);
    expect(response.text).toBe(text);
    expect(response.solution).toEqual(twoCalls);
    expect(server!.requests[0]!.body.stream).toBe(true);
  });

  it('reports usage with cache reads and writes and prices it', async () => {
    const registry = new ModelCatalog({ models: { 'anthropic:claude-haiku-4-5': { price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } } } });
    const model = await modelFor([anthropicStream(['{"calls":[],"output":"x"}'], anthropicUsage(100, 40, 2000, 500))], { registry });
    const response = await model.generate(request());
    expect(response.usage).toEqual({ inputTokens: 100, outputTokens: 40, cacheReadTokens: 2000, cacheWriteTokens: 500 });
    expect(response.costUsd).toBeCloseTo((100 * 1 + 40 * 5 + 2000 * 0.1 + 500 * 1.25) / 1e6, 12);
    expect(response.model).toBe('anthropic:claude-haiku-4-5-20251001');
  });

  it('maps the thinking share of the output tokens to reasoningTokens, streamed or whole', async () => {
    const usage = { ...anthropicUsage(100, 40), output_tokens_details: { thinking_tokens: 25 } };
    const streamed = await modelFor([anthropicStream(['{"calls":[],"output":"x"}'], usage)]);
    expect((await streamed.generate(request())).usage).toEqual({
      inputTokens: 100,
      outputTokens: 40,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 25,
    });
    await server!.close();
    const whole = await modelFor([anthropicMessage({ calls: [], output: 'x' }, usage)], { stream: false });
    expect((await whole.generate(request())).usage.reasoningTokens).toBe(25);
  });

  it("shows the provider's message of an error, not its raw JSON body", async () => {
    const model = await modelFor([anthropicError(400, 'prompt is too long: 210000 tokens > 200000 maximum')]);
    const error = await model.generate(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toBe('The Anthropic request failed: 400 prompt is too long: 210000 tokens > 200000 maximum');
  });

  it('retries 429 (retry-after) and 529, then succeeds', async () => {
    const retries: RetryEvent[] = [];
    const model = await modelFor(
      [anthropicError(429, 'rate limited', { 'retry-after': '0.03' }), anthropicError(529, 'Overloaded'), reset(), anthropicStream([JSON.stringify(twoCalls)])],
      { retry: { initialDelayMs: 2, random: () => 0, onRetry: (event) => retries.push(event) } },
    );
    expect((await model.generate(request())).solution).toEqual(twoCalls);
    expect(retries.map((event) => [event.status, event.delayMs])).toEqual([
      [429, 30],
      [529, 4],
      [undefined, 8],
    ]);
    expect(server!.requests).toHaveLength(4);
  });

  it('gives up after maxRetries with a model_error carrying the provider message', async () => {
    const model = await modelFor([anthropicError(500, 'Internal server error')], { retry: { maxRetries: 1, initialDelayMs: 1 } });
    const error = await model.generate(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe('model_error');
    expect((error as ModelError).message).toContain('Internal server error');
    expect(server!.requests).toHaveLength(2);
  });

  it('rejects promptly with an AbortError when aborted mid-stream', async () => {
    const text = JSON.stringify(twoCalls);
    const head = text.slice(0, text.indexOf('},') + 2);
    const model = await modelFor([anthropicStream([head, text.slice(head.length)], undefined, { holdAfter: 4, hang: true })]);
    const controller = new AbortController();
    const started = Date.now();
    const pending = model.generate(request({ signal: controller.signal, onCall: () => controller.abort() }));
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await within(server!.requests[0]!.closed, 1_000)).toBe(true);
  });

  it('opens the conversation with a user turn when the messages do not', async () => {
    const model = await modelFor([anthropicMessage({ calls: [], output: 'ok' })], { stream: false, promptCaching: false });
    await model.generate(request({ messages: [{ role: 'system', content: 'Only a system prompt.' }] }));
    const body = server!.requests[0]!.body;
    expect(body.system).toEqual([{ type: 'text', text: 'Only a system prompt.' }]);
    expect(body.messages).toEqual([{ role: 'user', content: expect.stringContaining('solution tool') }]);
  });

  it('requires ANTHROPIC_API_KEY', () => {
    expect(() => new AnthropicModel({ model: 'claude-haiku-4-5', env: {} })).toThrow(UsageError);
  });
});
