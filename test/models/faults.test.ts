/** Fault injection: each live provider, with its real SDK, against loopback servers that stall, cut, garble or cut the answer at its length limit. */
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../src/models/anthropic.js';
import type { LiveModelOptions } from '../../src/models/live-model-options.js';
import type { Model, ModelRequest, ModelRetry } from '../../src/protocol/model.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { BoundError, ModelError } from '../../src/protocol/errors.js';
import { anthropicStreamEvents, anthropicUsage } from './support/anthropic-wire.js';
import { cutAfter, pieces, requestsLeft, sse, stall, startServer, type Handler, type LoopbackServer } from './support/loopback.js';
import { openAIStreamEvents, openAIUsage } from './support/openai-wire.js';
import { solutionSchema } from './support/solution-schema.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const answer = JSON.stringify({ calls: [{ _tool: 'mix', tracks: ['a'] }], output: null });

interface Provider {
  name: string;
  /** The SSE events of a streamed answer, cut at the length limit when `cut`. */
  events(text: string, cut?: boolean): string[];
  /** An SSE event whose data is not JSON. */
  garbage: string;
  model(url: string, options: Partial<LiveModelOptions> & { maxTokens?: number }): Model;
}

const providers: Provider[] = [
  {
    name: 'OpenAI',
    events: (text, cut) => openAIStreamEvents(pieces(text, 8), openAIUsage(10, 5), 'gpt-4.1-mini', cut ? 'length' : 'stop'),
    garbage: 'data: {"id": "chatcmpl-1", "choices": [\n\n',
    model: (url, options) => new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: url, ...options }),
  },
  {
    name: 'Anthropic',
    events: (text, cut) => anthropicStreamEvents(pieces(text, 8), anthropicUsage(10, 5), 'claude-haiku-4-5', cut ? 'max_tokens' : 'tool_use'),
    garbage: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n',
    model: (url, { maxTokens, ...options }) =>
      new AnthropicModel({
        model: 'claude-haiku-4-5',
        env: { ANTHROPIC_API_KEY: 'k' },
        baseUrl: url,
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...options,
      }),
  },
];

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return { requestName: 'composer', step: 0, messages: [{ role: 'user', content: 'A ballad.' }], schema: solutionSchema, config: {}, ...extra };
}

const fast = { retry: { initialDelayMs: 1, maxDelayMs: 5 } };

describe.each(providers)('$name under faults', (provider) => {
  async function modelFor(handlers: Handler[], options: Partial<LiveModelOptions> & { maxTokens?: number } = {}): Promise<Model> {
    server = await startServer(handlers);
    return provider.model(server.url, { ...fast, ...options });
  }

  it('times out a server that never sends headers, tells the retry, and succeeds on the next attempt', async () => {
    // Long enough that the good second attempt never times out on a loaded machine.
    const model = await modelFor([stall(), sse(provider.events(answer))], { timeoutMs: 1_000 });
    const retries: ModelRetry[] = [];
    const response = await model.generate(request({ onRetry: (retry) => retries.push(retry) }));
    expect(response.solution).toEqual(JSON.parse(answer));
    expect(retries).toEqual([{ attempt: 1, reason: expect.stringMatching(/model timeout of 1 s/), waitMs: expect.any(Number) }]);
    expect(server!.requests).toHaveLength(2);
  });

  it('retries a stream that stalls after its first chunk, by the idle timeout', async () => {
    const model = await modelFor([sse(provider.events(answer), { holdAfter: 1, hang: true }), sse(provider.events(answer))], {
      timeoutMs: 60_000,
      idleTimeoutMs: 700,
    });
    const retries: ModelRetry[] = [];
    const response = await model.generate(request({ onRetry: (retry) => retries.push(retry) }));
    expect(response.solution).toEqual(JSON.parse(answer));
    expect(retries).toEqual([{ attempt: 1, reason: expect.stringMatching(/idle timeout of 0\.7 s/), waitMs: expect.any(Number) }]);
    // The stalled connection was closed, not left hanging.
    await server!.requests[0]!.closed;
  });

  it('lets a stream run past the idle timeout as long as no silence between its chunks is that long', async () => {
    // Chunks 120 ms apart for about a second, against an idle timeout of 400 ms: the timer fires
    // mid-stream, finds the last chunk recent and waits out the rest, every time.
    const paced: Handler = async (_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of provider.events(answer)) {
        response.write(event);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      response.end();
    };
    const model = await modelFor([paced], { timeoutMs: 60_000, idleTimeoutMs: 400 });
    const retries: ModelRetry[] = [];
    const started = performance.now();
    const response = await model.generate(request({ onRetry: (retry) => retries.push(retry) }));
    expect(response.solution).toEqual(JSON.parse(answer));
    expect(performance.now() - started).toBeGreaterThan(400);
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('still cuts a stream that goes silent after the idle timer has found it busy', async () => {
    // Chunks 150 ms apart outlast the 400 ms idle timeout, so its timer has already fired and waited
    // on at least once when the stream hangs; the silence that follows must still end the attempt.
    const events = provider.events(answer);
    const pausedThenSilent: Handler = async (request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of events.slice(0, 4)) {
        response.write(event);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      await request.closed;
    };
    const model = await modelFor([pausedThenSilent, sse(events)], { timeoutMs: 60_000, idleTimeoutMs: 400 });
    const retries: ModelRetry[] = [];
    const response = await model.generate(request({ onRetry: (retry) => retries.push(retry) }));
    expect(response.solution).toEqual(JSON.parse(answer));
    expect(retries).toEqual([{ attempt: 1, reason: expect.stringMatching(/idle timeout of 0\.4 s/), waitMs: expect.any(Number) }]);
    await server!.requests[0]!.closed;
  });

  it('fails with a model_error naming the timeout once every attempt timed out', async () => {
    const model = await modelFor([stall()], { timeoutMs: 100, retry: { maxRetries: 1, initialDelayMs: 1 } });
    const error = await model.generate(request()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'model_error', data: { attempts: 2 } });
    expect((error as Error).message).toMatch(/after 2 attempts: No complete answer within the model timeout of 0\.1 s/);
    expect(await requestsLeft(server!)).toBeLessThanOrEqual(2);
  });

  it('still cancels at once while an attempt waits on a stalled server, without a retry', async () => {
    const model = await modelFor([stall()], { timeoutMs: 60_000 });
    const controller = new AbortController();
    const retries: ModelRetry[] = [];
    const pending = model.generate(request({ signal: controller.signal, onRetry: (retry) => retries.push(retry) }));
    while (server!.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await server!.requests[0]!.closed;
    expect(retries).toEqual([]);
  });

  it('retries a stream cut mid-way before any call arrived', async () => {
    const model = await modelFor([cutAfter(provider.events(answer), 3), sse(provider.events(answer))]);
    const retries: ModelRetry[] = [];
    const response = await model.generate(request({ onRetry: (retry) => retries.push(retry) }));
    expect(response.solution).toEqual(JSON.parse(answer));
    expect(retries).toHaveLength(1);
  });

  it('fails an answer cut at the length limit with max_tokens_exceeded naming the limit, asking only once', async () => {
    const model = await modelFor([sse(provider.events(answer.slice(0, 20), true))]);
    const error = await model.generate(request({ config: { maxTokens: 300 } })).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BoundError);
    // The part that arrived goes with the error: a delegate worker's truncated output (DEL-26).
    expect(error).toMatchObject({ code: 'max_tokens_exceeded', data: { maxTokens: 300, partial: answer.slice(0, 20) } });
    expect((error as Error).message).toMatch(/length limit of 300 output tokens \(config\.maxTokens\)/);
    expect(server!.requests).toHaveLength(1);
  });

  it('fails a garbled stream at once: data that is not JSON is not a transient failure', async () => {
    const events = provider.events(answer);
    const model = await modelFor([sse([...events.slice(0, 2), provider.garbage, ...events.slice(2)])]);
    await expect(model.generate(request())).rejects.toBeInstanceOf(ModelError);
    expect(server!.requests).toHaveLength(1);
  });
});

describe('the length limit named when none was configured', () => {
  /** The error of a model whose answer is cut at the length limit. */
  async function cutError(provider: Provider, options: Partial<LiveModelOptions> & { maxTokens?: number } = {}): Promise<Error> {
    await server?.close();
    server = await startServer([sse(provider.events(answer.slice(0, 20), true))]);
    return provider
      .model(server.url, { ...fast, ...options })
      .generate(request())
      .catch((thrown: Error) => thrown) as Promise<Error>;
  }

  it("OpenAI: the provider's default", async () => {
    const error = await cutError(providers[0]!);
    expect(error).toMatchObject({ code: 'max_tokens_exceeded', data: { maxTokens: null } });
    expect(error.message).toMatch(/the provider's default length limit \(no maxTokens was set\)/);
  });

  it("Anthropic: the max_tokens it sent, delegate-run's default or the model option", async () => {
    expect((await cutError(providers[1]!)).message).toMatch(/length limit of 8192 output tokens \(the default of delegate-run\)/);
    expect((await cutError(providers[1]!, { maxTokens: 1000 })).message).toMatch(/length limit of 1000 output tokens \(the maxTokens option\)/);
  });
});
