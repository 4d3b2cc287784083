/** Unit tests of the resolver registry and the default resolver set. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import type { ToolSchema } from '../../src/protocol/types.js';
import type { ResolveContext, ResolvedRequest, Resolver } from '../../src/resolvers/resolver.js';
import { ResolverRegistry, createDefaultResolvers } from '../../src/resolvers/resolver-registry.js';
import type { UrlResolver } from '../../src/resolvers/url-resolver.js';
import { integrityOf } from '../../src/resolvers/integrity.js';
import {
  expectDelegateError,
  expectRequestError,
  makeTempDir,
  serveDocuments,
  startServer,
  validDocument,
  writeDocument,
  type LoopbackServer,
  type TempDir,
} from './helpers.js';

const tool: ToolSchema = { type: 'object', description: 'Do the thing.', properties: {} };

/** A resolver for worker names `worker:<name>` that records what it was asked. */
function workerResolver(): Resolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    name: 'workers',
    asked,
    accepts: (reference) => reference.startsWith('worker:'),
    resolve: async (reference): Promise<ResolvedRequest> => {
      asked.push(reference);
      return { location: reference, name: reference, trusted: true, document: { context: [], schema: true } };
    },
  };
}

describe('ResolverRegistry', () => {
  let dir: TempDir;
  let server: LoopbackServer;
  let registry: ResolverRegistry;
  let base: string;
  const at = (from?: string): ResolveContext => ({ ...(from ? { base: from } : {}), toolName: 'thing', tool });

  beforeAll(async () => {
    dir = await makeTempDir('registry-');
    await writeDocument(join(dir.path, 'local.json'), validDocument('local'));
    server = await startServer(serveDocuments({ '/remote.json': JSON.stringify(validDocument('remote')) }));
    registry = createDefaultResolvers({ root: dir.path, allowHosts: ['127.0.0.1'], handlers: defaultHandlers(), fetchTimeoutMs: 2000 });
    base = join(dir.path, 'main.json');
  });
  afterAll(async () => {
    await registry.get<UrlResolver>('url')?.close();
    await server.close();
    await dir.cleanup();
  });

  it('holds anonymous, name, url and file resolvers in that order by default', () => {
    expect(registry.list().map((resolver) => resolver.name)).toEqual(['anonymous', 'name', 'url', 'file']);
  });

  it('dispatches each form of reference to its resolver', async () => {
    expect((await registry.resolve('anonymous', at(base))).location).toBe('anonymous:thing');
    expect((await registry.resolve('./local.json', at(base))).name).toBe('local');
    expect((await registry.resolve(`${server.origin}/remote.json`, at(base))).name).toBe('remote');
    expect((await registry.resolve('./remote.json', at(`${server.origin}/main.json`))).name).toBe('remote');
    expect(registry.get<UrlResolver>('url')?.stats.downloads).toBe(1);
  });

  it('reports a reference no resolver understands as delegate_not_found listing the forms', async () => {
    const error = await expectDelegateError(registry.resolve('ftp://example.com/x.json', at(base)), 'delegate_not_found');
    expect(error.message).toContain('ftp://example.com/x.json');
    expect(error.message).toContain('"anonymous"');
    expect(error.message).toContain('http(s) URL');
    expect(error.message).toContain('relative path');
    expect(error.message).toContain('delegate name');
    expect(error.data.available).toEqual(['anonymous', 'name', 'url', 'file']);
  });

  it('lets users register resolvers, first or last, replacing one of the same name', async () => {
    const workers = workerResolver();
    const custom = new ResolverRegistry(registry.list()).register(workers, { first: true });
    expect(custom.list().map((resolver) => resolver.name)).toEqual(['workers', 'anonymous', 'name', 'url', 'file']);
    expect((await custom.resolve('worker:summarizer', at(base))).name).toBe('worker:summarizer');
    expect(workers.asked).toEqual(['worker:summarizer']);
    const replacement = workerResolver();
    custom.register(replacement);
    expect(custom.list()[0]).toBe(replacement);
    expect(custom.accepts('worker:x', at(base))).toBe(true);
  });

  it('reads what a resolver locates once, with its own handlers: a message type only they know is understood', async () => {
    const notes: Resolver = {
      name: 'notes',
      accepts: (reference) => reference.startsWith('note:'),
      resolve: async (reference) => ({
        location: reference,
        content: JSON.stringify({ context: [{ type: 'note', note: 'hi' }], schema: true }),
        trusted: false,
      }),
    };
    const handlers = defaultHandlers().register({ type: 'note', schema: { type: 'object', required: ['type', 'note'] } });
    const resolved = await new ResolverRegistry([notes], { handlers }).resolve('note:a', at(base));
    expect(resolved).toEqual({ location: 'note:a', name: 'note:a', trusted: false, document: { context: [{ type: 'note', note: 'hi' }], schema: true } });
    await expectRequestError(new ResolverRegistry([notes]).resolve('note:a', at(base)), 'note:a', '/context/0/type');
  });

  it('checks the integrity pin of a reference against what its resolver located, whichever resolver it is', async () => {
    const content = JSON.stringify(validDocument('pinned'));
    const pinned: Resolver = { name: 'pinned', accepts: () => true, resolve: async () => ({ location: 'pinned:x', content, trusted: true }) };
    const registry = new ResolverRegistry([pinned]);
    expect((await registry.resolve(`pinned:x#${integrityOf(content)}`, at(base))).name).toBe('pinned');
    await expectDelegateError(registry.resolve(`pinned:x#${integrityOf('other')}`, at(base)), 'delegate_forbidden');
  });

  it('describes a resolver without a form by its name, and an empty registry plainly', async () => {
    const error = await expectDelegateError(new ResolverRegistry([workerResolver()]).resolve('./x.json', at(base)), 'delegate_not_found');
    expect(error.message).toContain('the "workers" resolver');
    const empty = await expectDelegateError(new ResolverRegistry().resolve('./x.json', at(base)), 'delegate_not_found');
    expect(empty.message).toContain('no resolvers registered');
  });
});
