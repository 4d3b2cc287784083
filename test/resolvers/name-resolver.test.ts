/** Unit tests of delegates by name (DEL-21): the runtime's DelegateRegistry and the NameResolver asking the document's names, then the runtime's. */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/protocol/errors.js';
import type { RequestDocument, ToolSchema } from '../../src/protocol/types.js';
import { DelegateRegistry } from '../../src/resolvers/delegate-registry.js';
import { LISTED_NAMES } from '../../src/resolvers/name-resolver.js';
import type { ResolveContext } from '../../src/resolvers/resolver.js';
import { createDefaultResolvers, type ResolverRegistry } from '../../src/resolvers/resolver-registry.js';
import type { UrlResolver } from '../../src/resolvers/url-resolver.js';
import {
  expectDelegateError,
  expectRequestError,
  invalidDocument,
  makeTempDir,
  serveDocuments,
  startServer,
  validDocument,
  writeDocument,
  type LoopbackServer,
  type TempDir,
} from './helpers.js';

const tool: ToolSchema = { type: 'object', description: 'Summarize.', properties: {} };

describe('DelegateRegistry', () => {
  it('registers, replaces, lists (sorted), reads and removes names', () => {
    const registry = new DelegateRegistry({ Zed: './z.json' });
    registry.register('Alpha', 'https://example.com/a.json').register('Zed', './z2.json');
    expect(registry.names()).toEqual(['Alpha', 'Zed']);
    expect(registry.get('Zed')).toBe('./z2.json');
    expect(registry.has('Alpha')).toBe(true);
    expect(registry.unregister('Alpha')).toBe(true);
    expect(registry.unregister('Alpha')).toBe(false);
    expect(registry.get('Alpha')).toBeUndefined();
  });

  it('keeps its own copy of a document', () => {
    const document = validDocument('kept') as unknown as RequestDocument;
    const registry = new DelegateRegistry({ Kept: document });
    (document.meta as { name: string }).name = 'changed';
    expect((registry.get('Kept') as RequestDocument).meta?.name).toBe('kept');
    (registry.get('Kept') as RequestDocument).context.length = 0;
    expect((registry.get('Kept') as RequestDocument).context).toHaveLength(2);
  });

  it.each<[string, unknown, string]>([
    ['a/b', './x.json', 'Expected a delegate name'],
    ['anonymous', './x.json', 'other than "anonymous"'],
    ['Chain', 'Other', 'never for another name'],
    ['Text', './x.txt', 'does not end in .json'],
    ['Bad', 42, 'Expected a path, a URL or a Request document'],
  ])('refuses to register %s → %j with a usage error', (name, target, why) => {
    expect(() => new DelegateRegistry().register(name, target as string)).toThrow(UsageError);
    expect(() => new DelegateRegistry().register(name, target as string)).toThrow(why);
  });
});

describe('NameResolver', () => {
  let dir: TempDir;
  let server: LoopbackServer;
  let runtimeNames: DelegateRegistry;
  let resolvers: ResolverRegistry;
  let base: string;
  const at = (delegates?: Record<string, string>, from?: string, trusted?: boolean): ResolveContext => ({
    base: from ?? base,
    toolName: 'summarize',
    tool,
    ...(delegates ? { delegates } : {}),
    ...(trusted === undefined ? {} : { trusted }),
  });

  beforeAll(async () => {
    dir = await makeTempDir('names-');
    await writeDocument(join(dir.path, 'root', 'agents', 'doc-summarizer.json'), validDocument('doc-summarizer'));
    await writeDocument(join(dir.path, 'root', 'runtime-summarizer.json'), validDocument('runtime-summarizer'));
    await writeDocument(join(dir.path, 'root', 'broken.json'), invalidDocument());
    await writeDocument(join(dir.path, 'outside.json'), validDocument('outside'));
    server = await startServer(serveDocuments({ '/remote.json': JSON.stringify(validDocument('remote')) }));
    runtimeNames = new DelegateRegistry({
      SummarizerAgent: './runtime-summarizer.json',
      Remote: `${server.origin}/remote.json`,
      InMemory: { context: [{ type: 'system', text: 'In memory.' }], schema: true },
      Escaping: '../outside.json',
    });
    resolvers = createDefaultResolvers({ root: join(dir.path, 'root'), allowHosts: ['127.0.0.1'], delegates: runtimeNames });
    base = join(dir.path, 'root', 'agents', 'main.json');
  });
  afterAll(async () => {
    await resolvers.get<UrlResolver>('url')?.close();
    await server.close();
    await dir.cleanup();
  });

  it("asks the document's config.delegates first, resolving its path against the document", async () => {
    const resolved = await resolvers.resolve('SummarizerAgent', at({ SummarizerAgent: './doc-summarizer.json' }));
    expect(resolved).toMatchObject({
      name: 'doc-summarizer',
      registry: 'document',
      trusted: true,
      location: join(dir.path, 'root', 'agents', 'doc-summarizer.json'),
    });
  });

  it("then the runtime's registry, whose paths are relative to the root", async () => {
    const resolved = await resolvers.resolve('SummarizerAgent', at({ Other: './doc-summarizer.json' }));
    expect(resolved).toMatchObject({ name: 'runtime-summarizer', registry: 'runtime', location: join(dir.path, 'root', 'runtime-summarizer.json') });
  });

  it('resolves a URL a name stands for under the host rules, and a document held in memory', async () => {
    expect(await resolvers.resolve('Remote', at())).toMatchObject({ name: 'remote', registry: 'runtime', trusted: false });
    expect(await resolvers.resolve('InMemory', at())).toMatchObject({ name: 'InMemory', location: 'delegates:InMemory', registry: 'runtime', trusted: true });
  });

  it('never lends trust: what the runtime names is no more trusted than the calling run', async () => {
    expect(await resolvers.resolve('SummarizerAgent', at(undefined, undefined, false))).toMatchObject({ trusted: false });
    expect(await resolvers.resolve('InMemory', at(undefined, undefined, false))).toMatchObject({ trusted: false });
  });

  it('confines a path a name stands for to the root, from either registry', async () => {
    const fromDocument = await expectDelegateError(resolvers.resolve('Out', at({ Out: '../../outside.json' })), 'delegate_forbidden');
    expect(fromDocument.message).toMatch(/^Delegate "Out" \("\.\.\/\.\.\/outside\.json" in the document's config\.delegates\): .*outside the root/);
    expect(fromDocument.data).toMatchObject({ name: 'Out', registry: 'document' });
    await expectDelegateError(resolvers.resolve('Escaping', at()), 'delegate_forbidden');
  });

  it('validates what a name stands for like any delegate (DEL-8)', async () => {
    await expectRequestError(resolvers.resolve('Broken', at({ Broken: '../broken.json' })), join(dir.path, 'root', 'broken.json'), '/context/0');
  });

  it('fails an unknown name with delegate_not_found naming the registries searched and their names', async () => {
    const error = await expectDelegateError(resolvers.resolve('Missing', at({ Local: './doc-summarizer.json' })), 'delegate_not_found');
    expect(error.message).toContain('Delegate "Missing" of tool "summarize"');
    expect(error.message).toContain("document's config.delegates (names: Local)");
    expect(error.message).toContain("runtime's registry (names: Escaping, InMemory, Remote, SummarizerAgent)");
    expect(error.message).toContain("the root folder's catalog (names: broken, doc-summarizer, runtime-summarizer)");
    expect(error.data.registries).toEqual([
      { registry: 'document', names: ['Local'], count: 1 },
      { registry: 'runtime', names: ['Escaping', 'InMemory', 'Remote', 'SummarizerAgent'], count: 4 },
      { registry: 'catalog', names: ['broken', 'doc-summarizer', 'runtime-summarizer'], count: 3 },
    ]);
  });

  it('bounds the names it lists', async () => {
    const many = Object.fromEntries(Array.from({ length: LISTED_NAMES + 5 }, (_, index) => [`N${String(index).padStart(2, '0')}`, './x.json']));
    const error = await expectDelegateError(resolvers.resolve('Missing', at(many)), 'delegate_not_found');
    expect(error.message).toContain(`N${String(LISTED_NAMES - 1).padStart(2, '0')} and 5 more)`);
    expect((error.data.registries as { names: string[] }[])[0]?.names).toHaveLength(LISTED_NAMES);
  });

  it("takes a name before a URL-relative sibling: a name from a served document asks the server's catalog, never fetches the sibling", async () => {
    const before = server.requests.length;
    const error = await expectDelegateError(resolvers.resolve('sibling', at(undefined, `${server.origin}/main.json`)), 'delegate_not_found');
    expect(error.message).toContain('no delegate has that name');
    // This server publishes no catalog: the name is not found, and the message says why.
    expect(error.message).toContain(`the catalog of ${server.origin}/ (unreadable: `);
    expect(server.requests.slice(before).map((request) => request.path)).toEqual(['/']);
  });

  it("then the root folder's catalog: by file name without .json, or by meta.name, below the root", async () => {
    expect(await resolvers.resolve('runtime-summarizer', at())).toMatchObject({
      registry: 'catalog',
      location: join(dir.path, 'root', 'runtime-summarizer.json'),
    });
    expect(await resolvers.resolve('doc-summarizer', at())).toMatchObject({
      registry: 'catalog',
      location: join(dir.path, 'root', 'agents', 'doc-summarizer.json'),
    });
    // The registries come first: a name they hold never reaches the catalog.
    expect(await resolvers.resolve('runtime-summarizer', at({ 'runtime-summarizer': './doc-summarizer.json' }))).toMatchObject({ registry: 'document' });
    // A name never lends trust, the catalog's neither.
    expect(await resolvers.resolve('runtime-summarizer', at(undefined, undefined, false))).toMatchObject({ trusted: false });
  });

  it('fails a name two Requests of the folder hold, naming both, and counts a document reached through a symbolic link once', async () => {
    const folder = await makeTempDir('names-twins-');
    try {
      await writeDocument(join(folder.path, 'Twin.json'), validDocument('first'));
      await writeDocument(join(folder.path, 'more', 'second.json'), validDocument('Twin'));
      await writeDocument(join(folder.path, 'Solo.json'), validDocument('solo'));
      symlinkSync(join(folder.path, 'Solo.json'), join(folder.path, 'more', 'Solo.json'));
      const twins = createDefaultResolvers({ root: folder.path });
      const error = await expectDelegateError(twins.resolve('Twin', at(undefined, join(folder.path, 'main.json'))), 'delegate_not_found');
      expect(error.message).toContain("is ambiguous: the root folder's catalog has 2 Requests of that name, ./Twin.json and ./more/second.json");
      expect(error.data).toMatchObject({ registry: 'catalog', candidates: ['./Twin.json', './more/second.json'] });
      expect(await twins.resolve('Solo', at(undefined, join(folder.path, 'main.json')))).toMatchObject({ registry: 'catalog', name: 'solo' });
    } finally {
      await folder.cleanup();
    }
  });
});
