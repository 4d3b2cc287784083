/** Property test of file-delegate confinement: whatever the relative path, a resolved document really lies inside the real root. */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegateError } from '../../src/protocol/errors.js';
import { FileResolver } from '../../src/resolvers/file-resolver.js';
import { isInside } from '../../src/resolvers/reference-forms.js';
import { makeTempDir, validDocument, writeDocument, type TempDir } from '../resolvers/helpers.js';
import { buildConfinementMaze, mazeLastSegments } from './confinement-maze.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(100);

/** Path segments: parent steps, encoded tricks, separators, empty, plain folders and symlinks in and out of the root. */
const SEGMENTS = ['..', '.', '%2e%2e', '%2f', '..%2f', '%5c', '\\', '/', '', 'a', 'b', 'root', 'outside', 'link-in', 'link-out', 'link-up', 'link-above'];
const FILES = { file: 'doc.json', secret: 'secret.json' };
/** Last segments: documents, symlinked documents, a missing one, and things that are not documents. */
const LAST = mazeLastSegments(FILES);

describe('file delegate confinement', () => {
  let dir: TempDir;
  let root: string;
  let realRoot: string;
  let resolver: FileResolver;
  let bases: (string | undefined)[];

  beforeAll(async () => {
    dir = await makeTempDir('confinement-');
    const maze = await buildConfinementMaze(dir.path, {
      ...FILES,
      write: async (path, inside) => {
        await writeDocument(path, validDocument(inside ? 'inside' : 'outside'));
      },
    });
    root = maze.root;
    realRoot = await realpath(root);
    resolver = new FileResolver({ root });
    bases = [undefined, join(root, 'main.json'), join(root, 'a', 'main.json'), join(root, 'a', 'b', 'main.json'), join(maze.outside, 'main.json')];
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it('never resolves outside the real root, and fails only with delegate_forbidden or delegate_not_found', async () => {
    const outcomes = { resolved: 0, forbidden: 0, notFound: 0 };
    const reference = fc
      .tuple(fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 6 }), fc.constantFrom(...LAST))
      .map(([segments, last]) => [...segments, last].join('/'));
    await fc.assert(
      fc.asyncProperty(reference, fc.nat({ max: 4 }), async (path, baseIndex) => {
        const base = bases[baseIndex];
        const context = { ...(base === undefined ? {} : { base }), toolName: 't', tool: { type: 'object' as const } };
        expect(resolver.accepts(path, context)).toBe(true);
        try {
          const resolved = await resolver.resolve(path, context);
          outcomes.resolved++;
          expect(isInside(root, resolved.location), `${path} -> ${resolved.location}`).toBe(true);
          const real = await realpath(resolved.location);
          expect(isInside(realRoot, real), `${path} -> ${real}`).toBe(true);
          expect(resolved.trusted).toBe(true);
        } catch (error) {
          if (!(error instanceof DelegateError)) throw error;
          expect(['delegate_forbidden', 'delegate_not_found'], `${path}: ${error.message}`).toContain(error.code);
          if (error.code === 'delegate_forbidden') outcomes.forbidden++;
          else outcomes.notFound++;
        }
      }),
      config,
    );
    // The property is not vacuous: with enough runs, every outcome occurs.
    if (config.numRuns >= 100) {
      expect(outcomes.resolved).toBeGreaterThan(0);
      expect(outcomes.forbidden).toBeGreaterThan(0);
      expect(outcomes.notFound).toBeGreaterThan(0);
    }
  });
});
