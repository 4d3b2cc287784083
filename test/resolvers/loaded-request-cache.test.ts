/** Delegate documents are parsed and validated once per exact text and location (spec/delegation.md DEL-29), and a changed file is read anew. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinHandlers, defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { HandlerRegistry } from '../../src/protocol/messages/handlers.js';
import type { ToolSchema } from '../../src/protocol/types.js';
import { FileResolver } from '../../src/resolvers/file-resolver.js';
import { LOADED_REQUEST_CACHE_SIZE, loadRequestText } from '../../src/resolvers/loaded-request-cache.js';
import type { ResolveContext } from '../../src/resolvers/resolver.js';
import { ResolverRegistry } from '../../src/resolvers/resolver-registry.js';
import { type TempDir, expectRequestError, invalidDocument, makeTempDir, validDocument, writeDocument } from './helpers.js';

const tool: ToolSchema = { type: 'object', properties: {} };

describe('loaded delegate documents (DEL-29)', () => {
  let dir: TempDir;
  let registry: ResolverRegistry;
  let at: ResolveContext;

  beforeAll(async () => {
    dir = await makeTempDir('loaded-cache-');
    registry = new ResolverRegistry([new FileResolver({ root: dir.path })], { handlers: defaultHandlers() });
    at = { base: join(dir.path, 'main.json'), toolName: 't', tool };
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('gives the same frozen document for an unchanged file, read from disk each time', async () => {
    const path = join(dir.path, 'worker.json');
    await writeDocument(path, validDocument('worker'));
    const first = await registry.resolve('./worker.json', at);
    const second = await registry.resolve('./worker.json', at);
    expect(second.document).toBe(first.document);
    expect(Object.isFrozen(first.document)).toBe(true);
    expect(Object.isFrozen(first.document.context[0])).toBe(true);
    expect(() => {
      (first.document.context as unknown[]).push({ type: 'system', text: 'injected' });
    }).toThrow(TypeError);
    await writeDocument(path, { ...validDocument('worker'), meta: { name: 'changed' } });
    const third = await registry.resolve('./worker.json', at);
    expect(third.document).not.toBe(first.document);
    expect(third.name).toBe('changed');
  });

  it('refuses an invalid file every time it is read, naming the file and pointer, and takes it once fixed', async () => {
    const path = join(dir.path, 'broken.json');
    await writeDocument(path, invalidDocument());
    await expectRequestError(registry.resolve('./broken.json', at), path, '/context/0');
    await expectRequestError(registry.resolve('./broken.json', at), path, '/context/0');
    await writeDocument(path, validDocument('fixed'));
    expect((await registry.resolve('./broken.json', at)).name).toBe('fixed');
    await writeDocument(path, invalidDocument());
    await expectRequestError(registry.resolve('./broken.json', at), path, '/context/0');
  });

  it('keeps one verdict per location: the same text elsewhere is loaded with its own location and name', () => {
    const text = JSON.stringify(validDocument());
    const handlers = defaultHandlers();
    const a = loadRequestText(text, '/docs/a.json', handlers);
    const b = loadRequestText(text, '/docs/b.json', handlers);
    expect([a.name, b.name]).toEqual(['a', 'b']);
    expect(b.location).toBe('/docs/b.json');
  });

  it('validates again once a handler is registered, and per handler registry', () => {
    const text = JSON.stringify({ context: [{ type: 'note', text: 'hi' }], schema: true });
    const handlers = new HandlerRegistry(builtinHandlers());
    expect(() => loadRequestText(text, '/docs/note.json', handlers)).toThrow(/note/);
    handlers.register({ type: 'note', schema: { type: 'object', required: ['text'], properties: { type: { const: 'note' }, text: { type: 'string' } } } });
    expect(loadRequestText(text, '/docs/note.json', handlers).document.context).toHaveLength(1);
    expect(() => loadRequestText(text, '/docs/note.json', defaultHandlers())).toThrow(/note/);
  });

  it('drops the least recently used location beyond its size', () => {
    const handlers = defaultHandlers();
    const text = JSON.stringify(validDocument('kept'));
    const first = loadRequestText(text, '/docs/0.json', handlers);
    for (let index = 1; index <= LOADED_REQUEST_CACHE_SIZE; index += 1) loadRequestText(text, `/docs/${index}.json`, handlers);
    expect(loadRequestText(text, '/docs/0.json', handlers).document).not.toBe(first.document);
    const recent = loadRequestText(text, `/docs/${LOADED_REQUEST_CACHE_SIZE}.json`, handlers);
    expect(loadRequestText(text, `/docs/${LOADED_REQUEST_CACHE_SIZE}.json`, handlers).document).toBe(recent.document);
  });
});
