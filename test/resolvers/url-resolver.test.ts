/** Unit tests of the URL resolver against loopback servers: caching, sharing, allow-list, limits, statuses, timeouts. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/protocol/types.js';
import { integrityOf } from '../../src/resolvers/integrity.js';
import type { ResolveContext } from '../../src/resolvers/resolver.js';
import { UrlResolver, isJsonMediaType, type UrlResolverOptions } from '../../src/resolvers/url-resolver.js';
import { type LoopbackServer, type RegisteredResolver, expectDelegateError, registered, serveDocuments, startServer, validDocument } from './helpers.js';

const tool: ToolSchema = { type: 'object', properties: {} };
const context = (base?: string, signal?: AbortSignal): ResolveContext => ({ ...(base ? { base } : {}), ...(signal ? { signal } : {}), toolName: 't', tool });
const documentText = (name: string) => JSON.stringify(validDocument(name));

describe('UrlResolver', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<LoopbackServer> {
    const server = await startServer(handler);
    cleanups.push(server.close);
    return server;
  }

  function make(options: Partial<UrlResolverOptions> = {}): RegisteredResolver<UrlResolver> {
    const resolver = new UrlResolver({ allowHosts: ['127.0.0.1'], ...options });
    cleanups.push(() => resolver.close());
    return registered(resolver);
  }

  it('downloads once, then revalidates with If-None-Match and reuses the body on 304', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('cached') }));
    const resolver = make();
    const first = await resolver.resolve(`${server.origin}/doc.json`, context());
    const second = await resolver.resolve(`${server.origin}/doc.json`, context());
    expect(first.name).toBe('cached');
    expect(second).toEqual(first);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers['if-none-match']).toBeUndefined();
    expect(server.requests[1]?.headers['if-none-match']).toMatch(/^".+"$/);
    expect(resolver.stats).toMatchObject({ requests: 2, downloads: 1, revalidations: 1, notModified: 1 });
  });

  it('names the URL it tried and the cause when nothing listens there (DEL-5)', async () => {
    // A port on 127.0.0.1 that nothing listens on: bound, then closed.
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as AddressInfo;
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/doc.json`;
    const error = await expectDelegateError(make().resolve(url, context()), 'delegate_not_found');
    expect(error.message).toBe(`Delegate "${url}" was not found: the fetch failed: connect ECONNREFUSED 127.0.0.1:${port} (ECONNREFUSED).`);
    expect(error.data).toMatchObject({ url, networkCode: 'ECONNREFUSED' });
  });

  it('downloads again when the document changed since the cached ETag', async () => {
    const documents = { '/doc.json': documentText('before') };
    const server = await serve(serveDocuments(documents));
    const resolver = make();
    expect((await resolver.resolve(`${server.origin}/doc.json`, context())).name).toBe('before');
    documents['/doc.json'] = documentText('after');
    expect((await resolver.resolve(`${server.origin}/doc.json`, context())).name).toBe('after');
    expect(resolver.stats).toMatchObject({ downloads: 2, revalidations: 1, notModified: 0 });
  });

  it('does not cache answers without an ETag', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('plain') }, { etag: false }));
    const resolver = make();
    await resolver.resolve(`${server.origin}/doc.json`, context());
    await resolver.resolve(`${server.origin}/doc.json`, context());
    expect(server.requests.map((request) => request.headers['if-none-match'])).toEqual([undefined, undefined]);
    expect(resolver.stats).toMatchObject({ downloads: 2, revalidations: 0 });
  });

  it('shares one in-flight request between concurrent loads of one URL', async () => {
    const answer = serveDocuments({ '/doc.json': documentText('shared') });
    const server = await serve((request, response) => setTimeout(() => answer(request, response), 50));
    const resolver = make();
    const results = await Promise.all(Array.from({ length: 5 }, () => resolver.resolve(`${server.origin}/doc.json#ignored-fragment`, context())));
    expect(results.map((result) => result.name)).toEqual(Array(5).fill('shared'));
    expect(server.requests).toHaveLength(1);
    expect(resolver.stats).toMatchObject({ requests: 1, downloads: 1, shared: 4 });
  });

  it('refuses a host that is not allowed before any network traffic', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('x') }));
    const resolver = make({ allowHosts: ['example.com', `127.0.0.1:${server.port === 65535 ? 1 : server.port + 1}`] });
    const error = await expectDelegateError(resolver.resolve(`${server.origin}/doc.json`, context()), 'delegate_forbidden');
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).toContain('example.com');
    expect(server.requests).toHaveLength(0);
    expect(resolver.stats.requests).toBe(0);
  });

  it('allows a host:port entry on exactly that port, and a trusted host without an allow entry', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('x') }));
    expect((await make({ allowHosts: [`127.0.0.1:${server.port}`] }).resolve(`${server.origin}/doc.json`, context())).trusted).toBe(false);
    expect((await make({ allowHosts: [], trustHosts: ['127.0.0.1'] }).resolve(`${server.origin}/doc.json`, context())).trusted).toBe(true);
  });

  it('refuses by default, with no hosts allowed', async () => {
    const resolver = new UrlResolver();
    cleanups.push(() => resolver.close());
    await expectDelegateError(resolver.resolve('http://127.0.0.1:9/doc.json', context()), 'delegate_forbidden');
  });

  it('resolves a relative reference against the URL of the referring document', async () => {
    const server = await serve(serveDocuments({ '/common/other.json': documentText('other') }));
    const resolver = make();
    const base = `${server.origin}/requests/main.json`;
    const text = documentText('other');
    const resolved = await resolver.resolve(`../common/other.json#${integrityOf(text)}`, context(base));
    expect(resolved).toMatchObject({ name: 'other', location: `${server.origin}/common/other.json`, trusted: false });
    expect(resolver.accepts('../common/other.json', context(base))).toBe(true);
  });

  it('checks the allow-list of a relative reference that points at another host', async () => {
    const server = await serve(serveDocuments({}));
    const resolver = make();
    await expectDelegateError(resolver.resolve('//evil.example/x.json', context(`${server.origin}/main.json`)), 'delegate_forbidden');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses URLs carrying credentials', async () => {
    await expectDelegateError(make().resolve('http://user:secret@127.0.0.1:9/doc.json', context()), 'delegate_forbidden');
  });

  it('aborts a download larger than the size cap, naming the cap', async () => {
    const big = JSON.stringify({ ...validDocument('big'), padding: 'x'.repeat(2000) });
    const server = await serve((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', ...(request.url === '/declared.json' ? { 'content-length': String(big.length) } : {}) });
      if (request.url === '/declared.json') {
        response.end(big);
        return;
      }
      // Chunked, with no length declared: the cap must be enforced while streaming.
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= big.length || response.destroyed) {
          clearInterval(timer);
          response.end();
          return;
        }
        response.write(big.slice(sent, sent + 200));
        sent += 200;
      }, 2);
    });
    const resolver = make({ maxBytes: 1000 });
    for (const path of ['/declared.json', '/streamed.json']) {
      const error = await expectDelegateError(resolver.resolve(`${server.origin}${path}`, context()), 'delegate_forbidden');
      expect(error.message).toContain('1000 bytes');
      expect(error.data.maxBytes).toBe(1000);
    }
  });

  it('refuses an answer that is not JSON by content-type', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('x') }, { contentType: 'text/html' }));
    const error = await expectDelegateError(make().resolve(`${server.origin}/doc.json`, context()), 'delegate_forbidden');
    expect(error.message).toContain('text/html');
  });

  it('accepts +json media types', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('vendor') }, { contentType: 'application/vnd.request+json; charset=utf-8' }));
    expect((await make().resolve(`${server.origin}/doc.json`, context())).name).toBe('vendor');
    expect(isJsonMediaType('Application/JSON')).toBe(true);
    expect(isJsonMediaType('text/json-ish')).toBe(false);
    expect(isJsonMediaType('')).toBe(false);
  });

  it('maps 404 and 410 to delegate_not_found and other statuses to errors carrying the status', async () => {
    const server = await serve((request, response) => {
      const status = Number((request.url ?? '').slice(1));
      response.writeHead(status, status === 302 ? { location: 'http://evil.example/doc.json' } : {}).end();
    });
    const resolver = make();
    const error = await expectDelegateError(resolver.resolve(`${server.origin}/404`, context()), 'delegate_not_found');
    expect(error.message).toContain(`${server.origin}/404`);
    await expectDelegateError(resolver.resolve(`${server.origin}/410`, context()), 'delegate_not_found');
    expect((await expectDelegateError(resolver.resolve(`${server.origin}/500`, context()), 'delegate_not_found')).data.status).toBe(500);
    expect((await expectDelegateError(resolver.resolve(`${server.origin}/403`, context()), 'delegate_forbidden')).data.status).toBe(403);
    const redirect = await expectDelegateError(resolver.resolve(`${server.origin}/302`, context()), 'delegate_forbidden');
    expect(redirect.message).toContain('http://evil.example/doc.json');
    expect(server.requests.map((request) => request.path)).toEqual(['/404', '/410', '/500', '/403', '/302']);
  });

  it('times out a server that never answers', async () => {
    const server = await serve(() => undefined);
    const resolver = make({ headersTimeoutMs: 100 });
    const started = Date.now();
    const error = await expectDelegateError(resolver.resolve(`${server.origin}/doc.json`, context()), 'delegate_not_found');
    expect(error.message).toContain('100 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out a body that stalls', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"context": [');
    });
    const error = await expectDelegateError(make({ bodyTimeoutMs: 100 }).resolve(`${server.origin}/doc.json`, context()), 'delegate_not_found');
    expect(error.message).toContain('100 ms');
  });

  it('bounds the whole fetch, so a dripping server cannot hold it forever', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write(' ')), 20);
      response.on('close', () => clearInterval(timer));
    });
    const error = await expectDelegateError(make({ totalTimeoutMs: 200 }).resolve(`${server.origin}/doc.json`, context()), 'delegate_not_found');
    expect(error.message).toContain('200 ms');
  });

  it("rejects with the caller's abort reason when its signal aborts", async () => {
    const server = await serve(() => undefined);
    const resolver = make({ headersTimeoutMs: 300 });
    const controller = new AbortController();
    const pending = resolver.resolve(`${server.origin}/doc.json`, context(undefined, controller.signal));
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('names the URL without its fragment as the location', async () => {
    const server = await serve(serveDocuments({ '/doc.json': documentText('x') }));
    expect((await make().resolve(`${server.origin}/doc.json#part`, context())).location).toBe(`${server.origin}/doc.json`);
  });
});
