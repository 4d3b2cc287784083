// MODEL-10: what providerFetch hands the SDKs, read the ways the SDKs read it, against a loopback server.
import { afterEach, describe, expect, it } from 'vitest';
import { providerFetch } from '../../src/models/provider-fetch.js';
import { json, type LoopbackServer, sse, startServer } from './support/loopback.js';

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
});
