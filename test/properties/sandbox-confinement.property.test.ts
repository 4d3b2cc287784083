/** Property test of file-toolset confinement (FILES-4): whatever the path, reads and writes never leave the sandbox's real folder. */
import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileActivities } from '../../src/files/file-toolset.js';
import { CallError, DelegateError } from '../../src/protocol/errors.js';
import { SANDBOXES_PROPERTY } from '../../src/protocol/tools/file-tools.js';
import type { ActivityEnvironment } from '../../src/protocol/contracts.js';
import { makeTempDir, type TempDir } from '../resolvers/helpers.js';

/** Fixed seed so CI is deterministic; override with FC_SEED / FC_NUM_RUNS to explore. */
const config = { seed: Number(process.env.FC_SEED ?? 42), numRuns: Number(process.env.FC_NUM_RUNS ?? 150) };

/** Segments: parent steps, encodings, separators, empty, plain folders and symlinks in and out. */
const SEGMENTS = ['..', '.', '%2e%2e', '%2f', '..%2f', '%5c', '\\', '', 'a', 'b', 'box', 'link-in', 'link-out', 'link-up', 'link-above', '/etc'];
/** Last segments: files inside, links to files inside and out, a dangling link, new names. */
const LAST = ['a', 'link-in', 'doc.txt', 'secret.txt', 'link-in.txt', 'link-out.txt', 'dangling.txt', 'new.txt', '..', 'doc.txt%00', '..%2fsecret.txt'];
const SECRET = 'OUTSIDE-SECRET';

/** Every file below a folder with its content (links not followed), for comparing before and after. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

describe('file toolset confinement (FILES-4)', () => {
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
    }
    symlinkSync('../..', join(box, 'a', 'b', 'link-up'));
    symlinkSync('../..', join(box, 'a', 'link-above'));
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('never reads or writes outside the sandbox, and fails only with delegate_forbidden or invalid_params', async () => {
    const { read, write } = createFileActivities(root);
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
});
