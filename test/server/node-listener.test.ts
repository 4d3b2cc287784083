/** End-to-end tests of the Node adapter on a real loopback socket: raw targets, streaming, HEAD, graceful close. */
import { Agent, fetch, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRequestHandler } from '../../src/server/handler.js';
import { serve, type FetchHandler, type RunningServer } from '../../src/server/node-listener.js';
import { rawRequest } from './raw-request.js';
import { createServeFixture, HELLO, SECRET, type ServeFixture } from './serve-fixture.js';

let fixture: ServeFixture;
const servers: RunningServer[] = [];

beforeAll(async () => {
  fixture = await createServeFixture();
});

afterAll(async () => {
  await fixture.remove();
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close({ force: true })));
});

async function start(handler: FetchHandler): Promise<RunningServer> {
  const server = await serve(handler, { port: 0, host: '127.0.0.1' });
  servers.push(server);
  return server;
}

function folderHandler(lines: string[] = []) {
  return createRequestHandler({ root: fixture.root, log: (line) => lines.push(line) });
}

describe('serve()', () => {
  it('listens on an ephemeral port and reports its real URL', async () => {
    const server = await start(folderHandler());
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('serves a document with status, headers and body', async () => {
    const server = await start(folderHandler());
    const response = await fetch(`${server.url}/hello.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('etag')).toMatch(/^"/);
    expect(await response.text()).toBe(HELLO);
    const again = await fetch(`${server.url}/hello.json`, { headers: { 'if-none-match': response.headers.get('etag') as string } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('answers HEAD with content-length and no body', async () => {
    const server = await start(folderHandler());
    const response = await request(`${server.url}/hello.json`, { method: 'HEAD' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(HELLO)));
    expect(await response.body.text()).toBe('');
  });

  it('passes the client address to the access log', async () => {
    const lines: string[] = [];
    const server = await start(folderHandler(lines));
    await (await fetch(`${server.url}/hello.json`)).text();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^(127\.0\.0\.1|::ffff:127\.0\.0\.1) GET \/hello\.json 200 \d+B \d+ms$/);
  });

  it('hands the raw target to the handler, so dot segments are refused as written', async () => {
    const server = await start(folderHandler());
    for (const target of [
      '/../outside/secret.json',
      '/%2e%2e/outside/secret.json',
      '/music/../hello.json',
      '/linkdir-out/secret.json',
      '/music/..%2f..%2foutside%2fsecret.json',
      '/./hello.json',
    ]) {
      const response = await rawRequest(server.port, target);
      expect(response.status, target).toBe(404);
      expect(response.body).not.toContain(SECRET);
    }
    expect((await rawRequest(server.port, '/hello.json')).body).toBe(HELLO);
  });

  it('keeps a target like //host/x a path, never a different origin', async () => {
    const seen: string[] = [];
    const server = await start(async (incoming) => {
      seen.push(incoming.url);
      return new Response('ok');
    });
    await rawRequest(server.port, '//evil.test/hello.json');
    expect(seen).toEqual([`${server.url}//evil.test/hello.json`]);
  });

  it('answers 400 for a target that cannot be a URL, without calling the handler', async () => {
    let calls = 0;
    const server = await start(async () => {
      calls++;
      return new Response('ok');
    });
    const response = await rawRequest(server.port, '*', 'OPTIONS');
    expect(response.status).toBe(400);
    expect(calls).toBe(0);
  });

  it('answers other methods with 405 from the folder handler', async () => {
    const server = await start(folderHandler());
    const response = await request(`${server.url}/hello.json`, { method: 'POST', body: '{"a":1}' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    await response.body.text();
  });

  it('streams a response body chunk by chunk and passes every set-cookie', async () => {
    const server = await start(async () => {
      const encoder = new TextEncoder();
      let count = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          if (count === 50) controller.close();
          else controller.enqueue(encoder.encode(`chunk ${count++}\n`));
        },
      });
      const headers = new Headers({ 'content-type': 'text/plain' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response(body, { headers });
    });
    const response = await request(`${server.url}/stream`);
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const text = await response.body.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(50);
  });

  it('forwards a request body for methods that have one', async () => {
    const server = await start(async (incoming) => new Response(`${incoming.method}:${await incoming.text()}`));
    const response = await request(`${server.url}/echo`, { method: 'PUT', body: 'payload' });
    expect(await response.body.text()).toBe('PUT:payload');
  });

  it('answers 500 when the handler throws', async () => {
    const server = await start(async () => {
      throw new Error('boom');
    });
    const response = await request(`${server.url}/x`);
    expect(response.statusCode).toBe(500);
    expect(await response.body.text()).not.toContain('boom');
  });

  it('rejects when the port is taken', async () => {
    const server = await start(folderHandler());
    await expect(serve(folderHandler(), { port: server.port, host: '127.0.0.1' })).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('graceful close', () => {
  it('stops accepting, lets the in-flight request finish, then resolves', async () => {
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const server = await serve(
      async () => {
        started();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return new Response('finished');
      },
      { port: 0 },
    );
    const inFlight = request(`${server.url}/slow`);
    await handlerStarted;
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    await expect(rawRequest(server.port, '/late')).rejects.toThrow(/ECONNREFUSED/);
    release();
    const response = await inFlight;
    expect(response.statusCode).toBe(200);
    expect(response.headers.connection).toBe('close');
    expect(await response.body.text()).toBe('finished');
    await closing;
    expect(closed).toBe(true);
  });

  it('closes idle keep-alive connections at once', async () => {
    const server = await serve(folderHandler(), { port: 0 });
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      const response = await request(`${server.url}/hello.json`, { dispatcher: agent });
      await response.body.text();
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await agent.close();
    }
  });

  it('returns the same promise when called twice, and force cuts busy connections', async () => {
    const server = await serve(() => new Promise<Response>(() => undefined), { port: 0 });
    const hanging = request(`${server.url}/never`).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const first = server.close();
    expect(server.close()).toBe(first);
    await server.close({ force: true });
    expect(await hanging).toBeInstanceOf(Error);
  });
});
