/** Handler-level tests of the `delegate-serve` fetch handler: no sockets, a real temporary folder. */
import { mkdir, mkdtemp, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { HandlerRegistry } from '../../src/protocol/messages/handlers.js';
import { createRequestHandler, type RequestHandler, type ConnectionInfo } from '../../src/server/handler.js';
import { createServeFixture, DEEP, HELLO, HIDDEN, HIDDEN_DIR_DOC, PRODUCER, SECRET, type ServeFixture } from './serve-fixture.js';

let fixture: ServeFixture;
let lines: string[];
let handler: RequestHandler;

beforeAll(async () => {
  fixture = await createServeFixture();
});

afterAll(async () => {
  await fixture.remove();
});

beforeEach(() => {
  lines = [];
  handler = createRequestHandler({ root: fixture.root, log: (line) => lines.push(line) });
});

/** Calls the handler with a URL path; `raw` also hands it over as the wire's request-target. */
async function call(path: string, init: RequestInit & { raw?: boolean; info?: ConnectionInfo } = {}): Promise<Response> {
  const { raw, info, ...requestInit } = init;
  const request = new Request(`http://serve.test${path}`, requestInit);
  return handler(request, { ...(raw ? { rawTarget: path } : {}), ...info });
}

async function bodyText(response: Response): Promise<string> {
  return new TextDecoder().decode(await response.arrayBuffer());
}

describe('GET and HEAD of a document', () => {
  it('serves the bytes exactly as stored, as JSON, with a strong ETag and no-cache', async () => {
    const response = await call('/hello.json');
    expect(response.status).toBe(200);
    expect(await bodyText(response)).toBe(HELLO);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(HELLO)));
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });

  it('serves documents in nested folders and names that need percent-encoding', async () => {
    const producer = await call('/music/producer.json');
    expect(producer.status).toBe(200);
    expect(await bodyText(producer)).toBe(PRODUCER);
    const deep = await call('/music/nested/deep.json');
    expect(await bodyText(deep)).toBe(DEEP);
    const spaced = await call('/my%20doc.json');
    expect(spaced.status).toBe(200);
    expect(await bodyText(spaced)).toContain('spacious');
  });

  it('serves a symlink whose real path stays inside the folder, with the target bytes', async () => {
    const linked = await call('/link-in.json');
    expect(linked.status).toBe(200);
    expect(await bodyText(linked)).toBe(HELLO);
    expect(linked.headers.get('etag')).toBe((await call('/hello.json')).headers.get('etag'));
    const throughFolderLink = await call('/linkdir-in/producer.json');
    expect(await bodyText(throughFolderLink)).toBe(PRODUCER);
  });

  it('answers HEAD with the same headers and no body', async () => {
    const get = await call('/hello.json');
    const head = await call('/hello.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    for (const name of ['content-type', 'content-length', 'etag', 'cache-control']) {
      expect(head.headers.get(name)).toBe(get.headers.get(name));
    }
  });

  it('answers 304 with the ETag and no body when If-None-Match holds the tag', async () => {
    const tag = (await call('/hello.json')).headers.get('etag') as string;
    const cases = [tag, `"nope", ${tag}`, `W/${tag}`, '*', `"a,b", W/"c" ,${tag}`];
    for (const ifNoneMatch of cases) {
      const response = await call('/hello.json', { headers: { 'if-none-match': ifNoneMatch } });
      expect(response.status, ifNoneMatch).toBe(304);
      expect(response.headers.get('etag')).toBe(tag);
      expect(response.body).toBeNull();
      const head = await call('/hello.json', { method: 'HEAD', headers: { 'if-none-match': ifNoneMatch } });
      expect(head.status).toBe(304);
    }
  });

  it('answers 200 when If-None-Match holds other tags or is malformed', async () => {
    const tag = (await call('/hello.json')).headers.get('etag') as string;
    for (const ifNoneMatch of ['"other"', 'W/"other", "more"', tag.slice(1, -1), `${tag.slice(0, -2)}"`, '']) {
      const response = await call('/hello.json', { headers: { 'if-none-match': ifNoneMatch } });
      expect(response.status, ifNoneMatch).toBe(200);
    }
  });
});

describe('GET / (the catalog)', () => {
  it('lists the valid documents, sorted by path, with name, description, input and output', async () => {
    const response = await call('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const catalog = JSON.parse(await bodyText(response)) as { path: string }[];
    const helloEntry = { name: 'hello', description: null, input: null, output: { type: 'string' } };
    const producerEntry = {
      name: 'producer',
      description: 'Produces a track.',
      input: { type: 'object', properties: { genre: { type: 'string' } } },
      output: { type: 'object', properties: { track: { type: 'string' } } },
    };
    const deepEntry = { name: 'deep', description: null, input: null, output: { type: 'number' } };
    expect(catalog).toEqual([
      { path: '/hello.json', ...helloEntry },
      { path: '/link-in.json', ...helloEntry, name: 'link-in' },
      { path: '/linkdir-in/nested/deep.json', ...deepEntry },
      { path: '/linkdir-in/producer.json', ...producerEntry },
      { path: '/music/nested/deep.json', ...deepEntry },
      { path: '/music/producer.json', ...producerEntry },
      { path: '/my%20doc.json', ...helloEntry, name: 'my doc' },
    ]);
  });

  it('lists URL paths: every entry, requested exactly as listed, answers 200 with its document (SERVE-4)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'delegate-serve-names-'));
    try {
      const names = ['my song.json', 'café/naïve.json', '100%.json', 'a#b?.json', 'x+y&z=1;2.json', '🎵/%20.json', "it's (new).json"];
      for (const name of names) {
        await mkdir(dirname(join(folder, name)), { recursive: true });
        await writeFile(join(folder, name), JSON.stringify({ meta: { description: name }, context: [], schema: true }));
      }
      const served = createRequestHandler({ root: folder, log: () => undefined });
      const catalog = JSON.parse(await bodyText(await served(new Request('http://serve.test/')))) as { path: string; description: string }[];
      expect(catalog.map((entry) => entry.description).sort()).toEqual([...names].sort());
      for (const entry of catalog) {
        expect(entry.path.startsWith('/')).toBe(true);
        // Both as a client's URL and as the raw request-target of the wire.
        for (const response of [
          await served(new Request(`http://serve.test${entry.path}`)),
          await served(new Request('http://serve.test/'), { rawTarget: entry.path }),
        ]) {
          expect(response.status, entry.path).toBe(200);
          expect(JSON.parse(await bodyText(response)).meta.description).toBe(entry.description);
        }
      }
      expect(catalog.map((entry) => entry.path)).toContain('/my%20song.json');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('never lists invalid, hidden, non-JSON or escaping documents', async () => {
    const text = await bodyText(await call('/'));
    for (const forbidden of ['broken', 'garbled', 'secret', 'hidden', 'notes', 'readme', 'link-out', 'link-dot', 'link-txt', 'linkdir-out', 'loop', 'folder']) {
      expect(text).not.toContain(forbidden);
    }
    expect(text).not.toContain(fixture.base);
  });

  it('has an ETag, answers 304 for it, and HEAD has no body', async () => {
    const response = await call('/');
    const tag = response.headers.get('etag') as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect((await call('/', { headers: { 'if-none-match': tag } })).status).toBe(304);
    const head = await call('/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    expect(head.headers.get('etag')).toBe(tag);
  });

  it('ignores the query string', async () => {
    expect((await call('/?format=json')).status).toBe(200);
  });
});

describe('invalid documents', () => {
  it('answers 422 with invalid_request and problems located by request path', async () => {
    const response = await call('/broken.json');
    expect(response.status).toBe(422);
    const body = JSON.parse(await bodyText(response)) as { error: { code: string; message: string; problems: { document: string; pointer: string }[] } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('/broken.json');
    expect(body.error.problems.length).toBeGreaterThan(0);
    for (const problem of body.error.problems) expect(problem.document).toBe('/broken.json');
  });

  it('answers 422 for a document whose config.delegates has a bad entry, at its pointer (DEL-22)', async () => {
    const path = join(fixture.root, 'bad-names.json');
    await writeFile(path, JSON.stringify({ config: { delegates: { Child: 'Other' } }, context: [], schema: true }));
    try {
      const response = await call('/bad-names.json');
      expect(response.status).toBe(422);
      const body = JSON.parse(await bodyText(response)) as { error: { problems: { document: string; pointer: string; message: string }[] } };
      expect(body.error.problems).toEqual([
        { document: '/bad-names.json', pointer: '/config/delegates/Child', message: expect.stringContaining('never for another name') },
      ]);
    } finally {
      await rm(path);
    }
  });

  it('reports unparseable JSON with its line and column', async () => {
    const response = await call('/garbled.json');
    expect(response.status).toBe(422);
    const body = JSON.parse(await bodyText(response)) as { error: { problems: { document: string; line?: number }[] } };
    expect(body.error.problems[0]).toMatchObject({ document: '/garbled.json', line: 2 });
  });

  it('never leaks the absolute server path', async () => {
    for (const path of ['/broken.json', '/garbled.json', '/missing.json', '/notes.txt', '/']) {
      const text = await bodyText(await call(path));
      expect(text).not.toContain(fixture.base);
      expect(text).not.toContain(fixture.root);
    }
  });

  it('answers HEAD of an invalid document with 422 and no body', async () => {
    const head = await call('/broken.json', { method: 'HEAD' });
    expect(head.status).toBe(422);
    expect(head.body).toBeNull();
  });
});

describe('404 for everything that is not a servable document', () => {
  const refusedEverywhere = [
    '/missing.json',
    '/notes.txt',
    '/readme.md',
    '/music',
    '/music/',
    '/folder.json',
    '/.secret.json',
    '/.hidden/doc.json',
    '/link-out.json',
    '/link-dot.json',
    '/link-txt.json',
    '/linkdir-out/secret.json',
    '/linkdir-hidden/doc.json',
    '/loop/.secret.json',
    '/%zz.json',
    '/%E0%A4%A.json',
    '/music%2fproducer.json',
    '/music%2Fproducer.json',
    '/music%5cproducer.json',
    '/..%2foutside%2fsecret.json',
    '/%2e%2e%2foutside%2fsecret.json',
    '/hello.json%00',
    '/hello%00.json',
    '/%2ehidden/doc.json',
    '/%2esecret.json',
    '//hello.json',
    '/music//producer.json',
    '/hello.JSON',
    '/hello.json.',
    '/hello.json/',
  ];

  it.each(refusedEverywhere)('refuses %s (through the URL and as a raw target)', async (path) => {
    for (const raw of [false, true]) {
      const response = await call(path, { raw });
      expect(response.status, `${path} raw=${raw}`).toBe(404);
      const body = JSON.parse(await bodyText(response)) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('not_found');
      expect(body.error.message).toMatch(/\S/);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  const refusedRaw = [
    '/../outside/secret.json',
    '/music/../hello.json',
    '/./hello.json',
    '/%2e%2e/outside/secret.json',
    '/music/%2E%2e/hello.json',
    '/music/%2e/producer.json',
    '/music\\producer.json',
    '/..\\outside\\secret.json',
  ];

  it.each(refusedRaw)('refuses the raw target %s, which a URL parser would have normalised', async (path) => {
    const response = await call(path, { raw: true });
    expect(response.status).toBe(404);
  });

  it('lets the URL layer normalise dot segments when no raw target is given, and stays inside the folder', async () => {
    // WHATWG URL parsing removes `..`/`%2e%2e` and turns `\` into `/` before the handler sees the path.
    expect(await bodyText(await call('/music/%2E%2e/hello.json'))).toBe(HELLO);
    expect((await call('/../outside/secret.json')).status).toBe(404);
    expect((await call('/music\\producer.json')).status).toBe(200);
  });

  it('answers 404 for every document when the folder itself is gone, and an empty catalog', async () => {
    const gone = createRequestHandler({ root: join(fixture.base, 'nowhere'), log: () => undefined });
    expect((await gone(new Request('http://serve.test/hello.json'))).status).toBe(404);
    const catalog = await gone(new Request('http://serve.test/'));
    expect(JSON.parse(await bodyText(catalog))).toEqual([]);
  });

  it('never answers with the bytes of a file outside the folder or a hidden one', async () => {
    for (const path of [...refusedEverywhere, ...refusedRaw]) {
      for (const raw of [false, true]) {
        const text = await bodyText(await call(path, { raw }));
        for (const secret of [SECRET, HIDDEN, HIDDEN_DIR_DOC]) expect(text).not.toBe(secret);
      }
    }
  });
});

describe('methods', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('answers %s with 405 and allow: GET, HEAD', async (method) => {
    const response = await call('/hello.json', { method, ...(method === 'POST' || method === 'PUT' ? { body: '{}' } : {}) });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    const body = JSON.parse(await bodyText(response)) as { error: { code: string } };
    expect(body.error.code).toBe('method_not_allowed');
  });
});

describe('freshness', () => {
  it('reads files on every request: a change shows at once with a new ETag', async () => {
    const path = join(fixture.root, 'fresh.json');
    await writeFile(path, HELLO);
    const first = await call('/fresh.json');
    const tag = first.headers.get('etag') as string;
    const changed = HELLO.replace('helpful', 'HELPFUL');
    await writeFile(path, changed);
    const second = await call('/fresh.json', { headers: { 'if-none-match': tag } });
    expect(second.status).toBe(200);
    expect(await bodyText(second)).toBe(changed);
    expect(second.headers.get('etag')).not.toBe(tag);
    await rename(path, join(fixture.root, 'fresh.gone'));
    expect((await call('/fresh.json')).status).toBe(404);
  });

  it('notices a change that keeps size and mtime (verdicts are keyed by content, not by stat)', async () => {
    const path = join(fixture.root, 'same-size.json');
    const valid = '{"context":[],"schema":{"type":"string"}}';
    const invalid = '{"context":[],"schema":{"type":"string"}]';
    expect(valid.length).toBe(invalid.length);
    await writeFile(path, valid);
    const before = await stat(path);
    expect((await call('/same-size.json')).status).toBe(200);
    await writeFile(path, invalid);
    await utimes(path, before.atime, before.mtime);
    expect((await call('/same-size.json')).status).toBe(422);
    await writeFile(path, valid);
    expect((await call('/same-size.json')).status).toBe(200);
  });

  it('updates the catalog and its ETag when a document becomes valid', async () => {
    const path = join(fixture.root, 'becomes-valid.json');
    await writeFile(path, '{"context":[]}');
    const before = await call('/');
    expect(await bodyText(before)).not.toContain('becomes-valid');
    await writeFile(path, '{"context":[],"schema":{"type":"string"}}');
    const after = await call('/', { headers: { 'if-none-match': before.headers.get('etag') as string } });
    expect(after.status).toBe(200);
    expect(await bodyText(after)).toContain('becomes-valid.json');
  });
});

describe('the access log', () => {
  it('writes one line per request with client, method, path, status, bytes and milliseconds', async () => {
    await call('/hello.json', { info: { remoteAddress: '127.0.0.1' } });
    await call('/missing.json');
    await call('/hello.json', { method: 'HEAD' });
    await call('/hello.json', { method: 'POST', body: 'x' });
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`^127\\.0\\.0\\.1 GET /hello\\.json 200 ${Buffer.byteLength(HELLO)}B \\d+ms$`));
    expect(lines[1]).toMatch(/^- GET \/missing\.json 404 \d+B \d+ms$/);
    expect(lines[2]).toMatch(/^- HEAD \/hello\.json 200 0B \d+ms$/);
    expect(lines[3]).toMatch(/^- POST \/hello\.json 405 \d+B \d+ms$/);
  });

  it('logs the raw target and escapes what could break a log line', async () => {
    await call('/music/../hello.json', { raw: true });
    await handler(new Request('http://serve.test/a'), { rawTarget: '/a b\nc.json' });
    expect(lines[0]).toMatch(/^- GET \/music\/\.\.\/hello\.json 404 /);
    expect(lines[1]).toMatch(/^- GET \/a%20b%0Ac\.json 404 /);
  });

  it('writes to stderr by default', async () => {
    const defaultHandler = createRequestHandler({ root: fixture.root });
    const write = process.stderr.write.bind(process.stderr);
    const captured: string[] = [];
    process.stderr.write = ((chunk: string | Uint8Array) => {
      captured.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      await defaultHandler(new Request('http://serve.test/hello.json'));
    } finally {
      process.stderr.write = write;
    }
    expect(captured).toHaveLength(1);
    expect(captured[0]).toMatch(/^- GET \/hello\.json 200 \d+B \d+ms\n$/);
  });
});

describe('server faults', () => {
  it('answers 500 without details, reports the error and still logs one line', async () => {
    const handlers = new HandlerRegistry(builtinHandlers());
    handlers.register({
      type: 'system',
      normalize() {
        throw new Error(`exploded in ${fixture.root}`);
      },
    });
    const errors: unknown[] = [];
    const faulty = createRequestHandler({ root: fixture.root, handlers, log: (line) => lines.push(line), onError: (error) => errors.push(error) });
    const response = await faulty(new Request('http://serve.test/hello.json'));
    expect(response.status).toBe(500);
    const text = await bodyText(response);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal_error' } });
    expect(text).not.toContain(fixture.root);
    expect(errors).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ 500 /);
  });

  it('validates with the given handler registry', async () => {
    const handlers = new HandlerRegistry(builtinHandlers().filter((handler) => handler.type !== 'input'));
    const strict = createRequestHandler({ root: fixture.root, handlers, log: () => undefined });
    expect((await strict(new Request('http://serve.test/music/producer.json'))).status).toBe(422);
    expect((await strict(new Request('http://serve.test/hello.json'))).status).toBe(200);
  });

  it('serves the stored bytes even when they are not what JSON.stringify would write', async () => {
    const stored = await readFile(join(fixture.root, 'hello.json'));
    const served = new Uint8Array(await (await call('/hello.json')).arrayBuffer());
    expect(Buffer.from(served).equals(stored)).toBe(true);
  });
});
