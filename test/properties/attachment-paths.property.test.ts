/** Property test of attachment confinement (ATT-2): whatever the path — parent steps, encodings, NUL, symlinks — an attachment is read only from inside the caller's real root. */
import { writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAttachmentFile } from '../../src/activities/attachment-path.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { makeTempDir, type TempDir } from '../resolvers/helpers.js';
import { buildConfinementMaze, mazeLastSegments } from './confinement-maze.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(300);

/** Path segments: parent steps, encoded tricks, separators, NUL, empty, plain folders and symlinks in and out of the root. */
const SEGMENTS = ['..', '.', '%2e%2e', '%2f', '..%2f', '%5c', '\\', '/', '', '\0', 'a', 'b', 'root', 'outside', 'link-in', 'link-out', 'link-up', 'link-above'];
const FILES = { file: 'deck.pdf', secret: 'secret.pdf' };
/** Last segments: files, symlinked files, a missing one, and names that are not plain files. */
const LAST = mazeLastSegments(FILES);

describe('attachment confinement (ATT-2)', () => {
  let dir: TempDir;
  let root: string;

  beforeAll(async () => {
    dir = await makeTempDir('attachment-paths-');
    ({ root } = await buildConfinementMaze(dir.path, { ...FILES, write: (path, inside) => writeFile(path, inside ? 'INSIDE' : 'OUTSIDE') }));
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('reads only files inside the real root, and fails only with delegate_forbidden or invalid_params', async () => {
    const outcomes = { read: 0, forbidden: 0, missing: 0 };
    const path = fc
      .tuple(fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 6 }), fc.constantFrom(...LAST))
      .map(([segments, last]) => [...segments, last].join('/'));
    await fc.assert(
      fc.asyncProperty(path, async (candidate) => {
        try {
          const file = await readAttachmentFile(root, candidate);
          expect(new TextDecoder().decode(file.content)).toBe('INSIDE');
          expect(candidate.split('/')).not.toContain('..');
          outcomes.read++;
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          const code = (error as ProtocolError).code;
          expect(['delegate_forbidden', 'invalid_params']).toContain(code);
          if (code === 'delegate_forbidden') outcomes.forbidden++;
          else outcomes.missing++;
        }
      }),
      config,
    );
    // Not vacuous: every outcome happened.
    expect(outcomes.read).toBeGreaterThan(0);
    expect(outcomes.forbidden).toBeGreaterThan(0);
    expect(outcomes.missing).toBeGreaterThan(0);
  });

  it('refuses every path with a ".." segment, however it is placed', async () => {
    const around = fc.array(fc.constantFrom('a', 'b', 'link-in', '.'), { maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(around, around, fc.constantFrom(...LAST), async (before, after, last) => {
        const candidate = [...before, '..', ...after, last].join('/');
        await expect(readAttachmentFile(root, candidate)).rejects.toMatchObject({ code: 'delegate_forbidden' });
      }),
      config,
    );
  });
});
