/** SERVE-9: a conditional request for a version of a file already served valid is answered from its metadata, without reading it; any change is read again. */
import { link, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfinedDocumentUnless } from '../../src/server/confined-folder.js';
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

describe('readConfinedDocumentUnless (SERVE-9)', () => {
  it('does not read a file whose version the caller knows, and reads it once it changed', async () => {
    const first = await readConfinedDocumentUnless(root, ['doc.json'], () => false);
    expect(new TextDecoder().decode(first?.bytes)).toBe(VALID);
    const known = await readConfinedDocumentUnless(root, ['doc.json'], (identity) => identity === first?.identity);
    expect(known).toEqual({ identity: first?.identity });
    await writeFile(join(root, 'doc.json'), EDITED);
    const changed = await readConfinedDocumentUnless(root, ['doc.json'], (identity) => identity === first?.identity);
    expect(changed?.identity).not.toBe(first?.identity);
    expect(new TextDecoder().decode(changed?.bytes)).toBe(EDITED);
  });

  it('still refuses what is not servable before anything else', async () => {
    expect(await readConfinedDocumentUnless(root, ['missing.json'], () => true)).toBeUndefined();
    expect(await readConfinedDocumentUnless(root, ['..', 'doc.json'], () => true)).toBeUndefined();
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
