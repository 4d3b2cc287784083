/** SERVE-11, SERVE-12: an unchanged document is served from memory, any change on disk is served on the next request, and one turn's requests share one look at a file. */
import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRequestHandler, type RequestHandler } from '../../src/server/handler.js';

// Counts the file-system calls the server makes, by path; each is still the real call.
const calls = vi.hoisted(() => ({ open: [] as string[], lstat: [] as string[], realpath: [] as string[] }));
// An lstat tells `looked` once it has seen the file, and while `gate` is set, answers only once it resolves (as on a slow disk).
const held = vi.hoisted(() => ({ gate: undefined as Promise<void> | undefined, looked: (): void => undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const open = (path: string, ...rest: unknown[]) => {
    calls.open.push(path);
    (fs.open as (...all: unknown[]) => void)(path, ...rest);
  };
  return { ...fs, open };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...fs,
    lstat: async (path: string, ...rest: unknown[]) => {
      calls.lstat.push(path);
      const gate = held.gate;
      const stats = await (fs.lstat as (...all: unknown[]) => Promise<unknown>)(path, ...rest);
      held.looked();
      await gate;
      return stats;
    },
    realpath: (path: string, ...rest: unknown[]) => {
      calls.realpath.push(path);
      return (fs.realpath as (...all: unknown[]) => unknown)(path, ...rest);
    },
  };
});

const VALID = '{"context":[{"type":"system","text":"One."}],"schema":{"type":"string"}}\n';
const LONGER = '{"context":[{"type":"system","text":"Two, a longer text."}],"schema":{"type":"string"}}\n';
const OUTSIDE = '{"context":[{"type":"system","text":"OUTSIDE THE FOLDER"}],"schema":{"type":"string"}}\n';
let base: string;
let root: string;
let handler: RequestHandler;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'serve-fresh-'));
  root = join(base, 'served');
  await mkdir(join(root, 'team'), { recursive: true });
  await mkdir(join(base, 'outside'));
  await writeFile(join(root, 'team', 'doc.json'), VALID);
  await writeFile(join(base, 'outside', 'doc.json'), OUTSIDE);
  handler = createRequestHandler({ root, log: () => undefined });
  for (const list of Object.values(calls)) list.length = 0;
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const get = async (path: string, headers: Record<string, string> = {}) => {
  const response = await handler(new Request(`http://serve.test${path}`, { headers }));
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
};
const opensOf = (name: string) => calls.open.filter((path) => path.endsWith(name)).length;

describe('an unchanged document is served from memory (SERVE-11)', () => {
  it('reads the file once however often it is served, with the same bytes and tag', async () => {
    const first = await get('/team/doc.json');
    for (let index = 0; index < 4; index++) expect(await get('/team/doc.json')).toEqual(first);
    expect(first).toMatchObject({ status: 200, text: VALID });
    expect(opensOf('doc.json')).toBe(1);
    // Still looked at on every request: confinement and the file's version are checked each time.
    expect(calls.lstat.filter((path) => path.endsWith('doc.json'))).toHaveLength(4);
  });

  it('serves an edit on the next request, in place or by rename, with a new tag', async () => {
    const first = await get('/team/doc.json');
    await writeFile(join(root, 'team', 'doc.json'), LONGER);
    const edited = await get('/team/doc.json', { 'if-none-match': first.etag as string });
    expect(edited).toMatchObject({ status: 200, text: LONGER });
    expect(edited.etag).not.toBe(first.etag);
    await writeFile(join(root, 'team', 'next.json'), VALID);
    await rename(join(root, 'team', 'next.json'), join(root, 'team', 'doc.json'));
    expect(await get('/team/doc.json')).toEqual(first);
  });

  it('answers 404 once the file is deleted, and serves it again once it is back', async () => {
    await get('/team/doc.json');
    await unlink(join(root, 'team', 'doc.json'));
    expect((await get('/team/doc.json')).status).toBe(404);
    await writeFile(join(root, 'team', 'doc.json'), LONGER);
    expect(await get('/team/doc.json')).toMatchObject({ status: 200, text: LONGER });
  });

  it('stops serving a document whose path now leads out of the folder or into a dot-folder', async () => {
    const first = await get('/team/doc.json');
    // The file itself replaced by a symlink to a file outside.
    await unlink(join(root, 'team', 'doc.json'));
    await symlink(join(base, 'outside', 'doc.json'), join(root, 'team', 'doc.json'));
    for (const headers of [{}, { 'if-none-match': first.etag as string }] as Record<string, string>[]) {
      const answer = await get('/team/doc.json', headers);
      expect(answer.status).toBe(404);
      expect(answer.text).not.toContain('OUTSIDE');
    }
    // A folder on the way replaced by a symlink to a dot-folder holding the very same file.
    await rm(join(root, 'team'), { recursive: true });
    await mkdir(join(root, '.hidden'));
    await writeFile(join(root, '.hidden', 'doc.json'), VALID);
    await get('/team/doc.json');
    await symlink(join(root, '.hidden'), join(root, 'team'));
    expect((await get('/team/doc.json')).status).toBe(404);
  });

  it('answers 422 once a served document turns invalid, and 200 once it is fixed', async () => {
    await get('/team/doc.json');
    await writeFile(join(root, 'team', 'doc.json'), '{"context": 1}');
    const invalid = await get('/team/doc.json');
    expect(invalid.status).toBe(422);
    expect(JSON.parse(invalid.text).error.problems[0].document).toBe('/team/doc.json');
    expect((await get('/team/doc.json')).status).toBe(422);
    await writeFile(join(root, 'team', 'doc.json'), LONGER);
    expect(await get('/team/doc.json')).toMatchObject({ status: 200, text: LONGER });
  });
});

describe('the requests of one turn share one look at a file (SERVE-12)', () => {
  it('resolves the folder and looks at the file once for twenty concurrent requests', async () => {
    await get('/team/doc.json');
    for (const list of Object.values(calls)) list.length = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, () => get('/team/doc.json')));
    expect(new Set(answers.map((answer) => answer.text))).toEqual(new Set([VALID]));
    expect(calls.lstat).toHaveLength(1);
    expect(calls.realpath).toHaveLength(2);
    expect(calls.open).toHaveLength(0);
  });

  it('looks at every document of a warm catalog in one turn: the folder is resolved for the listing and the look, not once a document', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(root, 'team', `${name}.json`), VALID);
    expect(JSON.parse((await get('/')).text)).toHaveLength(5);
    for (const list of Object.values(calls)) list.length = 0;
    expect(JSON.parse((await get('/')).text)).toHaveLength(5);
    expect(calls.open).toHaveLength(0);
    expect(calls.lstat.filter((path) => path.endsWith('.json'))).toHaveLength(5);
    // Once to list the folder, once for the one look at all five.
    expect(calls.realpath.filter((path) => path === root)).toHaveLength(2);
  });

  it('lists a folder of more documents than it looks up at once, cold and then warm', async () => {
    await Promise.all(Array.from({ length: 600 }, (_, n) => writeFile(join(root, 'team', `d${n}.json`), VALID)));
    const cold = JSON.parse((await get('/')).text) as { path: string }[];
    expect(cold).toHaveLength(601);
    expect(cold.map((entry) => entry.path)).toEqual([...cold.map((entry) => entry.path)].sort());
    for (const list of Object.values(calls)) list.length = 0;
    expect(JSON.parse((await get('/')).text)).toEqual(cold);
    expect(calls.open).toHaveLength(0);
  });

  it('never answers a request from a look taken before it arrived', async () => {
    await get('/team/doc.json');
    let open = (): void => undefined;
    held.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const looked = new Promise<void>((resolve) => {
      held.looked = resolve;
    });
    const before = get('/team/doc.json');
    await looked;
    // The first request's look has seen the file and is held; the file changes, and a second request arrives.
    held.gate = undefined;
    await writeFile(join(root, 'team', 'doc.json'), LONGER);
    const after = get('/team/doc.json');
    open();
    expect((await before).text).toBe(VALID);
    expect((await after).text).toBe(LONGER);
  });
});
