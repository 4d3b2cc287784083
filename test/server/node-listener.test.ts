/** End-to-end tests of the Node adapter on a real loopback socket: raw targets, streaming, HEAD, graceful close. */
import { Agent, fetch, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRequestHandler } from '../../src/server/handler.js';
import { serve, type FetchHandler, type RunningServer } from '../../src/server/node-listener.js';
import type { PlainReply, PlainRequest } from '../../src/server/plain-exchange.js';
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

  it('sends the headers of an event stream before its first event, however long that is in coming', async () => {
    let events: ReadableStreamDefaultController<Uint8Array> | undefined;
    const server = await start(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              events = controller;
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const response = await request(`${server.url}/events`);
    expect(response.headers['content-type']).toBe('text/event-stream');
    events?.close();
    expect(await response.body.text()).toBe('');
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

/** A handler with both faces that records which one answered what. */
function twoFacedHandler(plainAnswer: (request: PlainRequest) => Promise<PlainReply> = async () => plainText('plain')) {
  const seen = { fetch: [] as string[], plain: [] as PlainRequest[] };
  const handler = Object.assign(
    async (request: Request) => {
      seen.fetch.push(`${request.method} ${request.url}`);
      return new Response('fetch');
    },
    {
      plain: async (request: PlainRequest) => {
        seen.plain.push(request);
        return plainAnswer(request);
      },
    },
  );
  return { handler, seen };
}

function plainText(text: string, status = 200): PlainReply {
  const body = new TextEncoder().encode(text);
  return { status, headers: { 'content-type': 'text/plain', 'content-length': String(body.byteLength) }, body };
}

describe('the plain face for GET and HEAD (SERVE-12)', () => {
  it('hands GET and HEAD in origin-form to plain with the raw target and the joined If-None-Match', async () => {
    const { handler, seen } = twoFacedHandler();
    const server = await start(handler);
    const got = await request(`${server.url}/x.json?q=1`, { headers: ['if-none-match', '"a"', 'if-none-match', 'W/"b"'] });
    expect(await got.body.text()).toBe('plain');
    const head = await request(`${server.url}/x.json`, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('5');
    expect(await head.body.text()).toBe('');
    expect(seen.fetch).toEqual([]);
    expect(seen.plain).toEqual([
      { method: 'GET', target: '/x.json?q=1', ifNoneMatch: '"a", W/"b"', remoteAddress: expect.stringMatching(/127\.0\.0\.1$/) },
      { method: 'HEAD', target: '/x.json', ifNoneMatch: null, remoteAddress: expect.stringMatching(/127\.0\.0\.1$/) },
    ]);
  });

  it('leaves other methods and absolute-form targets to the fetch face', async () => {
    const { handler, seen } = twoFacedHandler();
    const server = await start(handler);
    const posted = await request(`${server.url}/x.json`, { method: 'POST', body: 'x' });
    expect(await posted.body.text()).toBe('fetch');
    const absolute = await rawRequest(server.port, `${server.url}/x.json`);
    expect(absolute.body).toContain('fetch');
    expect(seen.plain).toEqual([]);
    expect(seen.fetch).toEqual([`POST ${server.url}/x.json`, `GET ${server.url}/x.json`]);
  });

  it('sends no body with a 304, and answers 500 when plain fails', async () => {
    let fail = false;
    const { handler } = twoFacedHandler(async () => {
      if (fail) throw new Error('boom');
      return plainText('stale', 304);
    });
    const server = await start(handler);
    const notModified = await rawRequest(server.port, '/x.json');
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBe('');
    fail = true;
    const failed = await request(`${server.url}/x.json`);
    expect(failed.statusCode).toBe(500);
    expect(await failed.body.text()).not.toContain('boom');
  });

  it('tells a keep-alive client, while closing, that the connection ends with this answer', async () => {
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { handler } = twoFacedHandler(async () => {
      started();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return plainText('finished');
    });
    const server = await serve(handler, { port: 0 });
    const inFlight = request(`${server.url}/slow.json`);
    await handlerStarted;
    const closing = server.close();
    release();
    const response = await inFlight;
    expect(response.headers.connection).toBe('close');
    expect(await response.body.text()).toBe('finished');
    await closing;
  });

  it('gives the folder handler the same answers on both faces', async () => {
    const lines: string[] = [];
    const handler = folderHandler(lines);
    const server = await start(handler);
    for (const [method, target] of [
      ['GET', '/hello.json'],
      ['HEAD', '/hello.json'],
      ['GET', '/missing.json'],
      ['GET', '/'],
    ] as const) {
      const overSocket = await request(`${server.url}${target}`, { method });
      const direct = await handler(new Request(`${server.url}${target}`, { method }), { rawTarget: target });
      const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...socketHeaders } = overSocket.headers;
      expect(socketHeaders, `${method} ${target}`).toEqual(Object.fromEntries(direct.headers));
      expect(overSocket.statusCode).toBe(direct.status);
      expect(await overSocket.body.text()).toBe(await direct.text());
    }
    expect(lines).toHaveLength(8);
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
