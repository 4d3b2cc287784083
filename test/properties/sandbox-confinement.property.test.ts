/** Property test of file-toolset confinement (FILES-4, FILES-8, FILES-10): whatever the path or glob, reads, writes and listings never leave the sandbox's real folder, by descriptor paths and by the fallback. */
import { linkSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileActivities, LISTING_CUT } from '../../src/files/file-toolset.js';
import type { Pinning } from '../../src/files/pinned-folder.js';
import { CallError, DelegateError } from '../../src/protocol/errors.js';
import { SANDBOXES_PROPERTY } from '../../src/protocol/tools/file-tools.js';
import type { ActivityEnvironment } from '../../src/protocol/contracts.js';
import { makeTempDir, type TempDir } from '../resolvers/helpers.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(150);

/** Segments: parent steps, encodings, separators, empty, plain folders and symlinks in and out. */
const SEGMENTS = ['..', '.', '%2e%2e', '%2f', '..%2f', '%5c', '\\', '', 'a', 'b', 'box', 'link-in', 'link-out', 'link-up', 'link-above', '/etc'];
/** Last segments: files inside, links to files inside and out, a hard link out, a dangling link, new names. */
const LAST = [
  'a',
  'link-in',
  'doc.txt',
  'secret.txt',
  'link-in.txt',
  'link-out.txt',
  'hard.txt',
  'dangling.txt',
  'new.txt',
  '..',
  'doc.txt%00',
  '..%2fsecret.txt',
];
/** Pieces of globs: picomatch's syntax, names in the sandbox and links out of it. */
const GLOB_PIECES = ['*', '**', '?', '/', 'a', 'b', 'link-out', 'doc', '.txt', '{a,b}', '[ab]', '..', 'secret'];
const SECRET = 'OUTSIDE-SECRET';

/** Every file below a folder with its content (links not followed), for comparing before and after. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

const PINNINGS: [string, Pinning][] = [
  ['descriptor paths', { descriptorPaths: true }],
  ['the fallback', { descriptorPaths: false }],
];

describe.each(PINNINGS)('file toolset confinement, by %s (FILES-4, FILES-8)', (_label, pinning) => {
  let dir: TempDir;
  let root: string;
  let outside: string;
  let box: string;

  beforeAll(async () => {
    dir = await makeTempDir('sandbox-');
    root = join(dir.path, 'root');
    outside = join(dir.path, 'outside');
    box = join(root, 'box');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), SECRET);
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'secret.txt'), SECRET);
    for (const folder of [box, join(box, 'a'), join(box, 'a', 'b')]) {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'doc.txt'), 'INSIDE');
      symlinkSync(join(box, 'a'), join(folder, 'link-in'));
      symlinkSync(outside, join(folder, 'link-out'));
      symlinkSync(join(box, 'doc.txt'), join(folder, 'link-in.txt'));
      symlinkSync(join(outside, 'secret.txt'), join(folder, 'link-out.txt'));
      symlinkSync(join(outside, 'missing.txt'), join(folder, 'dangling.txt'));
      linkSync(join(outside, 'secret.txt'), join(folder, 'hard.txt'));
    }
    symlinkSync('../..', join(box, 'a', 'b', 'link-up'));
    symlinkSync('../..', join(box, 'a', 'link-above'));
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('never reads or writes outside the sandbox, and fails only with delegate_forbidden or invalid_params', async () => {
    const { read, write } = createFileActivities(root, { pinning });
    const sandboxes = { box: { path: './box', mode: 'rw' } };
    const environment = { run: { location: join(root, 'main.json') } } as unknown as ActivityEnvironment;
    const realBox = realpathSync(box);
    const outcomes = { done: 0, forbidden: 0, invalid: 0 };
    const path = fc
      .tuple(fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 5 }), fc.constantFrom(...LAST))
      .map(([segments, last]) => ['box', ...segments, last].join('/'));
    await fc.assert(
      fc.asyncProperty(path, fc.boolean(), async (written, writing) => {
        const before = { outside: snapshot(outside), rootSecret: readFileSync(join(root, 'secret.txt'), 'utf8') };
        const call = { _tool: writing ? 'write_file' : 'read_file', path: written, content: 'WRITTEN', [SANDBOXES_PROPERTY]: sandboxes };
        try {
          const result = await (writing ? write : read)(call, { type: 'object' }, [], environment);
          outcomes.done++;
          if (!writing) expect(['INSIDE', 'WRITTEN'], written).toContain(result);
        } catch (error) {
          if (error instanceof DelegateError && error.code === 'delegate_forbidden') outcomes.forbidden++;
          else if (error instanceof CallError && error.code === 'invalid_params') outcomes.invalid++;
          else throw error;
        }
        // Nothing outside the sandbox changed, and nothing new appeared there.
        expect(snapshot(outside), written).toEqual(before.outside);
        expect(readFileSync(join(root, 'secret.txt'), 'utf8')).toBe(before.rootSecret);
        expect(readdirSync(root).sort()).toEqual(['box', 'secret.txt']);
        for (const file of Object.keys(snapshot(box))) expect(realpathSync(file).startsWith(realBox)).toBe(true);
      }),
      config,
    );
    if (config.numRuns >= 100) {
      expect(outcomes.done).toBeGreaterThan(0);
      expect(outcomes.forbidden).toBeGreaterThan(0);
    }
  });
  it('lists only files inside the sandbox, whatever the glob', async () => {
    const { list } = createFileActivities(root, { pinning });
    const sandboxes = { box: { path: './box', mode: 'rw' } };
    const environment = { run: { location: join(root, 'main.json') } } as unknown as ActivityEnvironment;
    const realBox = realpathSync(box);
    const glob = fc.array(fc.constantFrom(...GLOB_PIECES), { maxLength: 6 }).map((pieces) => pieces.join(''));
    await fc.assert(
      fc.asyncProperty(fc.option(glob, { nil: undefined }), async (written) => {
        const call = { _tool: 'list_files', sandbox: 'box', ...(written === undefined ? {} : { glob: written }), [SANDBOXES_PROPERTY]: sandboxes };
        let listed: string[];
        try {
          listed = (await list(call, { type: 'object' }, [], environment)) as string[];
        } catch (error) {
          if (error instanceof CallError && error.code === 'invalid_params') return;
          throw error;
        }
        for (const path of listed) {
          if (path === LISTING_CUT) continue;
          expect(path.startsWith('box/'), path).toBe(true);
          const real = realpathSync(join(box, path.slice('box/'.length)));
          expect(real.startsWith(`${realBox}/`), path).toBe(true);
        }
      }),
      // Fewer runs: a glob with two stars is matched under its budget's timer (FILES-12).
      { ...config, numRuns: Math.min(config.numRuns, 60) },
    );
  });
});
