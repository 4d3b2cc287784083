// MODEL-10: what providerFetch hands the SDKs, read the ways the SDKs read it, against a loopback server.
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIModel } from '../../src/models/openai.js';
import { providerFetch } from '../../src/models/provider-fetch.js';
import { deferred, type Handler, json, type LoopbackServer, sse, startServer, within } from './support/loopback.js';
import { openAIStreamEvents } from './support/openai-wire.js';

const servers: LoopbackServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serving(...handlers: Parameters<typeof startServer>[0]): Promise<LoopbackServer> {
  const server = await startServer(handlers);
  servers.push(server);
  return server;
}

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const events = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: [DONE]\n\n'];

describe('providerFetch (MODEL-10)', () => {
  it('hands over a streamed answer whose body the SDKs iterate as it arrives, with its status, headers and URL', async () => {
    const server = await serving(sse(events));
    const response = await providerFetch(`${server.url}/v1/chat`, post({ stream: true }));
    expect([response.ok, response.status, response.url, response.bodyUsed]).toEqual([true, 200, `${server.url}/v1/chat`, false]);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const body = response.body as unknown as AsyncIterable<Uint8Array>;
    let text = '';
    for await (const chunk of body) text += Buffer.from(chunk).toString('utf8');
    expect(text).toBe(events.join(''));
    expect(server.requests[0]?.body).toEqual({ stream: true });
  });

  it('reads a streamed answer whole like a Response, and refuses to clone it rather than read it twice', async () => {
    const server = await serving(sse(events));
    const response = await providerFetch(`${server.url}/v1/chat`, post({ stream: true }));
    expect(() => response.clone()).toThrow(TypeError);
    expect(await response.text()).toBe(events.join(''));
    expect(response.bodyUsed).toBe(true);
  });

  it('hands over any other answer as a standard Response, an error body included', async () => {
    const server = await serving(json(429, { error: { message: 'slow down' } }, { 'retry-after': '1' }));
    const response = await providerFetch(`${server.url}/v1/chat`, post({}));
    expect(response).toBeInstanceOf(Response);
    expect([response.ok, response.status, response.headers.get('retry-after')]).toEqual([false, 429, '1']);
    expect(await response.clone().json()).toEqual({ error: { message: 'slow down' } });
  });

  it('decodes an answer a server compressed without being asked, streamed or whole, error bodies too', async () => {
    const gzipped =
      (status: number, contentType: string, text: string): Handler =>
      (_, response) => {
        response.writeHead(status, { 'content-type': contentType, 'content-encoding': 'gzip' });
        response.end(gzipSync(text));
      };
    const server = await serving(
      gzipped(200, 'text/event-stream', events.join('')),
      gzipped(200, 'application/json', '{"ok":true}'),
      gzipped(500, 'application/json', '{"error":{"message":"down"}}'),
    );
    const streamed = await providerFetch(`${server.url}/v1/chat`, post({ stream: true }));
    let text = '';
    for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8');
    expect(text).toBe(events.join(''));
    expect(await (await providerFetch(`${server.url}/v1/chat`, post({}))).json()).toEqual({ ok: true });
    const failed = await providerFetch(`${server.url}/v1/chat`, post({}));
    expect([failed.status, await failed.json()]).toEqual([500, { error: { message: 'down' } }]);
    // No encoding was asked for: a server that follows HTTP sends the answer as it is.
    expect(server.requests.map((request) => request.headers['accept-encoding'])).toEqual([undefined, undefined, undefined]);
  });

  it('gives the OpenAI SDK a compressed streamed answer it can read, through the provider', async () => {
    const answer = JSON.stringify({ calls: [], output: 'done' });
    const server = await serving((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      response.end(gzipSync(openAIStreamEvents([answer]).join('')));
    });
    const model = new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${server.url}/v1`, env: {}, retry: { maxRetries: 0 } });
    const schema = { type: 'object', properties: { calls: { type: 'array', items: { type: 'object' } }, output: { type: 'string' } }, required: ['output'] };
    const response = await model.generate({ requestName: 'r', step: 0, messages: [{ role: 'user', content: 'go' }], schema, config: {} });
    expect(response.solution).toEqual({ calls: [], output: 'done' });
  });

  it('fails the body of a compressed answer that cannot be decoded instead of handing the SDK its bytes: an unknown coding, or data cut short', async () => {
    const server = await serving(
      (_, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'compress' });
        response.end('????');
      },
      (_, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        response.end(gzipSync('{"ok":true}').subarray(0, 12));
      },
    );
    const unknown = await providerFetch(`${server.url}/v1/chat`, post({}));
    await expect(unknown.json()).rejects.toThrow(/content coding "compress", which cannot be decoded/);
    const cut = await providerFetch(`${server.url}/v1/chat`, post({}));
    await expect(cut.json()).rejects.toThrow(/unexpected end of file/);
  });

  it('asks once for an answer in an unknown coding: the SDK fails it as an answer, not as a connection to retry', async () => {
    const server = await serving((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'compress' });
      response.end('????');
    });
    const model = new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${server.url}/v1`, env: {}, retry: { maxRetries: 2 } });
    const asked = model.generate({ requestName: 'r', step: 0, messages: [{ role: 'user', content: 'go' }], schema: { type: 'object' }, config: {} });
    await expect(asked).rejects.toThrow(/content coding "compress"/);
    expect(server.requests).toHaveLength(1);
  });

  it('releases the connection of a compressed answer whose data turns bad mid-stream, or that the reader cancels', async () => {
    const closed = [deferred(), deferred()];
    let answered = 0;
    const opened: Handler = (_, response) => {
      response.socket?.once('close', closed[answered++]!.resolve);
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      // A valid start, flushed so the client can decode it; the server then never ends.
      const start = gzipSync('{"first":"part"');
      response.write(start.subarray(0, start.length - 8));
    };
    const server = await serving((request, response) => {
      opened(request, response);
      response.write(Buffer.from('not gzip at all, and never an end'));
    }, opened);
    const bad = await providerFetch(`${server.url}/v1/chat`, post({}));
    await expect(bad.text()).rejects.toThrow();
    expect(await within(closed[0]!.promise, 2000)).toBe(true);
    const cancelled = await providerFetch(`${server.url}/v1/chat`, post({}));
    const reader = cancelled.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(await within(closed[1]!.promise, 2000)).toBe(true);
  });
});
