/** What the file tools open (FILES-8 to FILES-13): hard links, FIFOs and sockets, links on a write, bounded listings, atomic writes and messages without host paths. */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileActivities, LISTING_CUT, MAX_LIST_ENTRIES } from '../../src/files/file-toolset.js';
import type { Pinning } from '../../src/files/pinned-folder.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { SANDBOXES_PROPERTY, type SandboxSpec } from '../../src/protocol/tools/file-tools.js';
import type { ActivityEnvironment } from '../../src/protocol/contracts.js';
import { tempDir } from '../helpers/cli.js';

const SECRET = 'OUTSIDE-SECRET';

/** A root holding the sandbox folder `box` and a secret beside it. */
function rootWithBox(): { root: string; box: string; secret: string } {
  const root = tempDir('sandbox-files-');
  const box = join(root, 'box');
  mkdirSync(box);
  const secret = join(root, 'secret.txt');
  writeFileSync(secret, SECRET);
  return { root, box, secret };
}

/** Calls one of the Activities and returns its result or the error as the model sees it (ERR-1). */
async function call(
  root: string,
  activity: 'list' | 'read' | 'write',
  parameters: Record<string, unknown>,
  sandbox: Partial<SandboxSpec> = {},
  pinning?: Pinning,
): Promise<{ result?: unknown; error?: ReturnType<ProtocolError['toJSON']> }> {
  const activities = createFileActivities(root, pinning === undefined ? {} : { pinning });
  const sandboxes = { box: { path: './box', mode: 'rw', ...sandbox } };
  const environment = { run: { location: join(root, 'main.json') } } as unknown as ActivityEnvironment;
  try {
    return { result: await activities[activity]({ _tool: activity, ...parameters, [SANDBOXES_PROPERTY]: sandboxes }, { type: 'object' }, [], environment) };
  } catch (error) {
    if (error instanceof ProtocolError) return { error: error.toJSON() };
    throw error;
  }
}

/** Settles within `ms` or says it hung: a FIFO opened for writing blocks until a reader comes. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  return Promise.race([promise, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms).unref())]);
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

const PINNINGS: [string, Pinning][] = [
  ['descriptor paths', { descriptorPaths: true }],
  ['the fallback', { descriptorPaths: false }],
];

describe.each(PINNINGS)('files the tools refuse to open, by %s (FILES-10)', (_label, pinning) => {
  it('refuses to read or overwrite a hard link to a file outside the sandbox, unless reads opt in', async () => {
    const { root, box, secret } = rootWithBox();
    linkSync(secret, join(box, 'hard.txt'));
    const read = await call(root, 'read', { path: 'box/hard.txt' }, {}, pinning);
    expect(read.error).toMatchObject({ code: 'delegate_forbidden', message: expect.stringContaining('2 hard links') });
    const written = await call(root, 'write', { path: 'box/hard.txt', content: 'OVERWRITTEN' }, {}, pinning);
    expect(written.error).toMatchObject({ code: 'delegate_forbidden' });
    expect(readFileSync(secret, 'utf8')).toBe(SECRET);
    // The document's word lets reads through; writes never.
    expect(await call(root, 'read', { path: 'box/hard.txt' }, { readHardLinks: true }, pinning)).toEqual({ result: SECRET });
    expect((await call(root, 'write', { path: 'box/hard.txt', content: 'x' }, { readHardLinks: true }, pinning)).error?.code).toBe('delegate_forbidden');
  });

  it.runIf(process.platform !== 'win32')('refuses a FIFO at once, for writing and reading, without blocking', async () => {
    const { root, box } = rootWithBox();
    execFileSync('mkfifo', [join(box, 'pipe.txt')]);
    const written = await within(call(root, 'write', { path: 'box/pipe.txt', content: 'x' }, {}, pinning), 5000);
    expect(written).toMatchObject({ error: { code: 'invalid_params', message: expect.stringContaining('not a regular file') } });
    const read = await within(call(root, 'read', { path: 'box/pipe.txt' }, {}, pinning), 5000);
    expect(read).toMatchObject({ error: { code: 'invalid_params', message: expect.stringContaining('not a regular file') } });
  });

  it.runIf(process.platform !== 'win32')('refuses a socket', async () => {
    const { root, box } = rootWithBox();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(join(box, 'socket.txt'), resolve));
    expect((await within(call(root, 'read', { path: 'box/socket.txt' }, {}, pinning), 5000)) as object).toMatchObject({
      error: { code: 'invalid_params', message: expect.stringContaining('not a regular file') },
    });
    expect((await within(call(root, 'write', { path: 'box/socket.txt', content: 'x' }, {}, pinning), 5000)) as object).toMatchObject({
      error: { code: 'invalid_params' },
    });
  });

  it('replaces no symbolic link on a write, even one that stays inside', async () => {
    const { root, box, secret } = rootWithBox();
    writeFileSync(join(box, 'target.txt'), 'INSIDE');
    symlinkSync(join(box, 'target.txt'), join(box, 'inside-link.txt'));
    symlinkSync(secret, join(box, 'outside-link.txt'));
    for (const path of ['box/inside-link.txt', 'box/outside-link.txt'])
      expect((await call(root, 'write', { path, content: 'x' }, {}, pinning)).error).toMatchObject({ code: 'delegate_forbidden' });
    expect(readFileSync(join(box, 'target.txt'), 'utf8')).toBe('INSIDE');
    expect(readFileSync(secret, 'utf8')).toBe(SECRET);
    // Reading through the link inside stays allowed (FILES-3).
    expect(await call(root, 'read', { path: 'box/inside-link.txt' }, {}, pinning)).toEqual({ result: 'INSIDE' });
  });
});

describe('listings are bounded (FILES-11)', () => {
  it('does not follow links to folders: 22 levels of two links each list at once', async () => {
    const { root, box } = rootWithBox();
    let level = box;
    for (let depth = 0; depth < 22; depth++) {
      const next = join(level, 'next');
      mkdirSync(next);
      symlinkSync(next, join(level, 'left'));
      symlinkSync(next, join(level, 'right'));
      level = next;
    }
    writeFileSync(join(level, 'end.txt'), 'end');
    const listed = await within(call(root, 'list', { sandbox: 'box' }), 15_000);
    expect(listed).toEqual({ result: [`box/${'next/'.repeat(22)}end.txt`] });
  });

  it(`stops at ${MAX_LIST_ENTRIES} entries and says it was cut`, async () => {
    const { root, box } = rootWithBox();
    for (let index = 0; index < MAX_LIST_ENTRIES + 50; index++) writeFileSync(join(box, `f${index}.txt`), '');
    const listed = (await call(root, 'list', { sandbox: 'box' })).result as string[];
    expect(listed).toHaveLength(MAX_LIST_ENTRIES + 1);
    expect(listed.at(-1)).toBe(LISTING_CUT);
    expect(listed.slice(0, -1).every((path) => path.startsWith('box/f'))).toBe(true);
  });

  it('refuses a hostile glob within its budget (FILES-12)', async () => {
    const { root, box } = rootWithBox();
    writeFileSync(join(box, 'a'.repeat(60)), '');
    const listed = await within(call(root, 'list', { sandbox: 'box', glob: `**${'a*'.repeat(24)}ab` }), 15_000);
    expect(listed).toMatchObject({ error: { code: 'invalid_params', message: expect.stringContaining('ms to match') } });
  });
});

describe('writes land whole (FILES-9)', () => {
  it('a reader sees the old file or the new one, never a part', async () => {
    const { root, box } = rootWithBox();
    const size = 600_000;
    const contents = ['A'.repeat(size), 'B'.repeat(size)];
    writeFileSync(join(box, 'big.txt'), contents[0] as string);
    let writing = true;
    const torn: number[] = [];
    const reader = (async () => {
      let reads = 0;
      while (writing || reads < 50) {
        const { result } = await call(root, 'read', { path: 'box/big.txt' });
        reads++;
        if (!contents.includes(result as string)) torn.push((result as string | undefined)?.length ?? -1);
      }
    })();
    for (let index = 0; index < 40; index++) await call(root, 'write', { path: 'box/big.txt', content: contents[index % 2] });
    writing = false;
    await reader;
    expect(torn).toEqual([]);
    // No temporary file is left beside it.
    expect(readdirSync(box)).toEqual(['big.txt']);
  });
});

describe('messages name sandbox paths, never host paths (FILES-13)', () => {
  it('says <sandbox>/<path> for refusals and failures alike', async () => {
    const { root, box, secret } = rootWithBox();
    symlinkSync(secret, join(box, 'leak.txt'));
    symlinkSync(root, join(box, 'up'));
    mkdirSync(join(box, 'folder'));
    writeFileSync(join(box, 'file.txt'), 'x');
    const outcomes = [
      await call(root, 'read', { path: 'box/leak.txt' }),
      await call(root, 'read', { path: 'box/up/secret.txt' }),
      await call(root, 'read', { path: 'box/missing.txt' }),
      await call(root, 'read', { path: 'box/folder' }),
      await call(root, 'write', { path: 'box/up/new.txt', content: 'x' }),
      await call(root, 'write', { path: 'box/file.txt/new.txt', content: 'x' }),
      await call(root, 'write', { path: 'box/folder', content: 'x' }),
      await call(root, 'list', { sandbox: 'box' }, { path: './missing' }),
      await call(root, 'read', { path: 'box/x.txt' }, { path: '..' }),
    ];
    for (const outcome of outcomes) expect(outcome.error).toBeDefined();
    expect(outcomes[0]?.error?.message).toContain('"box/leak.txt"');
    expect(JSON.stringify(outcomes)).not.toContain(root);
    expect(readdirSync(root).sort()).toEqual(['box', 'secret.txt']);
  });
});
