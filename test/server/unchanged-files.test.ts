/** SERVE-9: a conditional request for a version of a file already served valid is answered from its metadata, without reading it; any change is read again. */
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfinedDocument, statConfinedDocuments } from '../../src/server/confined-folder.js';
import { createRequestHandler, type RequestHandler } from '../../src/server/handler.js';

const VALID = '{"context":[{"type":"system","text":"One."}],"schema":{"type":"string"}}';
const EDITED = '{"context":[{"type":"system","text":"Two, longer."}],"schema":{"type":"string"}}';
let root: string;
let handler: RequestHandler;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'serve-unchanged-'));
  await writeFile(join(root, 'doc.json'), VALID);
  handler = createRequestHandler({ root, log: () => undefined });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const get = (path: string, tag?: string) => handler(new Request(`http://serve.test${path}`, tag === undefined ? {} : { headers: { 'if-none-match': tag } }));

/** The version of one document, as `statConfinedDocuments` tells it. */
const statConfinedDocument = (root: string, segments: string[]) => statConfinedDocuments(root, [segments])[0];

describe('statConfinedDocuments and readConfinedDocument (SERVE-9, SERVE-11, SERVE-12)', () => {
  it('tell the version of a file from its metadata, the same version the read saw, and a new one once it changed', async () => {
    const first = await readConfinedDocument(root, ['doc.json']);
    expect(new TextDecoder().decode(first?.bytes)).toBe(VALID);
    expect(await statConfinedDocument(root, ['doc.json'])).toBe(first?.identity);
    await writeFile(join(root, 'doc.json'), EDITED);
    const changed = await statConfinedDocument(root, ['doc.json']);
    expect(changed).not.toBe(first?.identity);
    const read = await readConfinedDocument(root, ['doc.json']);
    expect(read?.identity).toBe(changed);
    expect(new TextDecoder().decode(read?.bytes)).toBe(EDITED);
  });

  it('still refuse what is not servable', async () => {
    await symlink(join(root, 'doc.json'), join(root, 'link.json'));
    await mkdir(join(root, '.hidden'));
    await writeFile(join(root, '.hidden', 'x.json'), VALID);
    await symlink(join(root, '.hidden', 'x.json'), join(root, 'into-hidden.json'));
    for (const segments of [['missing.json'], ['..', 'doc.json'], ['into-hidden.json']]) {
      expect(await statConfinedDocument(root, segments), segments.join('/')).toBeUndefined();
      expect(await readConfinedDocument(root, segments), segments.join('/')).toBeUndefined();
    }
    // A symlink inside the folder to a servable document is served as that document.
    expect(await statConfinedDocument(root, ['link.json'])).toBe(await statConfinedDocument(root, ['doc.json']));
  });

  it('read a document into memory of its own size, so what the cache holds is what it counts', async () => {
    const read = await readConfinedDocument(root, ['doc.json']);
    expect(read?.bytes.byteLength).toBe(VALID.length);
    expect(read?.bytes.buffer.byteLength).toBeLessThanOrEqual(VALID.length + 1);
  });

  it('look up several documents at once, each on its own', async () => {
    const [doc, missing, outside] = statConfinedDocuments(root, [['doc.json'], ['missing.json'], ['..', 'doc.json']]);
    expect(await doc).toBe(await statConfinedDocument(root, ['doc.json']));
    expect(await missing).toBeUndefined();
    expect(await outside).toBeUndefined();
    expect(statConfinedDocuments(root, [])).toEqual([]);
  });
});

describe('delegate-serve: conditional requests (SERVE-9)', () => {
  it('answers 304 for the version it served, and the new bytes with a new tag once the file changed', async () => {
    const first = await get('/doc.json');
    const tag = first.headers.get('etag') as string;
    const again = await get('/doc.json', tag);
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(tag);
    await writeFile(join(root, 'doc.json'), EDITED);
    const edited = await get('/doc.json', tag);
    expect(edited.status).toBe(200);
    expect(await edited.text()).toBe(EDITED);
    expect(edited.headers.get('etag')).not.toBe(tag);
  });

  it('never answers 304 for a version that turned invalid, nor for another path to the same file', async () => {
    const tag = (await get('/doc.json')).headers.get('etag') as string;
    await link(join(root, 'doc.json'), join(root, 'other.json'));
    // Another path is its own resource: read and validated, though the bytes (and so the tag) are equal.
    const other = await get('/other.json', tag);
    expect(other.status).toBe(304);
    await writeFile(join(root, 'doc.json'), '{"context": 1}');
    const invalid = await get('/doc.json', tag);
    expect(invalid.status).toBe(422);
    expect((await get('/doc.json', tag)).status).toBe(422);
  });
});
