/** Property: whatever path a client sends, `delegate-serve` never answers with a file outside its folder (handler and socket layers). */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestHandler, type RequestHandler } from '../../src/server/handler.js';
import { serve, type RunningServer } from '../../src/server/node-listener.js';
import { rawRequest } from '../server/raw-request.js';
import { createServeFixture, type ServeFixture } from '../server/serve-fixture.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

/** Path segments: traversal in every spelling, hidden names, real files, symlinks in and out. */
const SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2e',
  '%2e',
  '.%2e',
  '%2f',
  '%5c',
  '%2F',
  '\\',
  '..\\',
  '%00',
  '..%2f',
  '%252e%252e',
  '',
  '.hidden',
  '.secret.json',
  'doc.json',
  'x.json',
  'hello.json',
  'hello.json%2f..',
  'broken.json',
  'music',
  'nested',
  'producer.json',
  'deep.json',
  'music%2fproducer.json',
  'link-in.json',
  'link-out.json',
  'link-dot.json',
  'link-txt.json',
  'notes.txt',
  'linkdir-in',
  'linkdir-out',
  'linkdir-hidden',
  'loop',
  'outside',
  'secret.json',
];

const requestPath = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join('/')}`);

let fixture: ServeFixture;
let handler: RequestHandler;
let catalogBody: Buffer;
/** Real paths of the valid documents a plain path may reach. */
let validRealPaths: Set<string>;

beforeAll(async () => {
  fixture = await createServeFixture();
  handler = createRequestHandler({ root: fixture.root, log: () => undefined });
  catalogBody = Buffer.from(await (await handler(new Request('http://serve.test/'))).arrayBuffer());
  validRealPaths = new Set(['hello.json', 'music/producer.json', 'music/nested/deep.json'].map((path) => join(fixture.root, path)));
});

afterAll(async () => {
  await fixture.remove();
});

/** True when a 200 body is the catalog or the bytes of a file inside the folder. */
function isServableBody(body: Buffer): boolean {
  return body.equals(catalogBody) || fixture.servable.some((bytes) => bytes.equals(body));
}

/** True when some raw segment is, or decodes to, a traversal, hidden name, slash or NUL. */
function hasForbiddenSegment(path: string): boolean {
  if (path === '/') return false;
  return path
    .slice(1)
    .split('/')
    .some((segment) => {
      if (segment === '' || segment.includes('\\')) return true;
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return true;
      }
      return decoded.startsWith('.') || /[/\\\u0000]/.test(decoded);
    });
}

/** The real path a plain path names, when it exists. */
async function realPathOf(path: string): Promise<string | undefined> {
  return realpath(join(fixture.root, ...path.slice(1).split('/'))).catch(() => undefined);
}

describe('serving paths (property)', () => {
  it('the handler, given the raw target, refuses every forbidden segment and serves exactly the reachable valid documents', async () => {
    await fc.assert(
      fc.asyncProperty(requestPath, async (path) => {
        const response = await handler(new Request('http://serve.test/'), { rawTarget: path });
        const body = Buffer.from(await response.arrayBuffer());
        if (response.status === 200) expect(isServableBody(body)).toBe(true);
        if (hasForbiddenSegment(path)) {
          expect(response.status).toBe(404);
          return;
        }
        if (path === '/') {
          expect(body.equals(catalogBody)).toBe(true);
          return;
        }
        const real = await realPathOf(path);
        const reachable = real !== undefined && validRealPaths.has(real);
        expect(response.status === 200).toBe(reachable);
      }),
      settings,
    );
  });

  it('the handler, given only a parsed URL, serves nothing but files inside the folder', async () => {
    await fc.assert(
      fc.asyncProperty(requestPath, async (path) => {
        const response = await handler(new Request(`http://serve.test${path}`));
        expect([200, 404, 422]).toContain(response.status);
        if (response.status === 200) expect(isServableBody(Buffer.from(await response.arrayBuffer()))).toBe(true);
      }),
      settings,
    );
  });

  describe('through a real socket', () => {
    let server: RunningServer;

    beforeAll(async () => {
      server = await serve(handler, { port: 0, host: '127.0.0.1' });
    });

    afterAll(async () => {
      await server.close({ force: true });
    });

    it('serves nothing but files inside the folder, whatever bytes the request line holds', async () => {
      await fc.assert(
        fc.asyncProperty(requestPath, async (path) => {
          const response = await rawRequest(server.port, path);
          if (response.status === 200) expect(isServableBody(response.bytes)).toBe(true);
          if (hasForbiddenSegment(path)) expect(response.status).not.toBe(200);
        }),
        settings,
      );
    });
  });
});
