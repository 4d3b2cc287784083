/** Property test of file-delegate confinement: whatever the relative path, a resolved document really lies inside the real root. */
import { mkdir, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegateError } from '../../src/protocol/errors.js';
import { FileResolver } from '../../src/resolvers/file-resolver.js';
import { isInside } from '../../src/resolvers/reference-forms.js';
import { makeTempDir, validDocument, writeDocument, type TempDir } from '../resolvers/helpers.js';

/** Fixed seed so CI is deterministic; override with FC_SEED / FC_NUM_RUNS to explore. */
const config = { seed: Number(process.env.FC_SEED ?? 42), numRuns: Number(process.env.FC_NUM_RUNS ?? 100) };

/** Path segments: parent steps, encoded tricks, separators, empty, plain folders and symlinks in and out of the root. */
const SEGMENTS = ['..', '.', '%2e%2e', '%2f', '..%2f', '%5c', '\\', '/', '', 'a', 'b', 'root', 'outside', 'link-in', 'link-out', 'link-up', 'link-above'];
/** Last segments: documents, symlinked documents, a missing one, and things that are not documents. */
const LAST = ['doc.json', 'secret.json', 'link-in.json', 'link-out.json', 'missing.json', '..', 'a', 'doc.json%00', '..%2fsecret.json'];

describe('file delegate confinement', () => {
  let dir: TempDir;
  let root: string;
  let realRoot: string;
  let resolver: FileResolver;
  let bases: (string | undefined)[];

  beforeAll(async () => {
    dir = await makeTempDir('confinement-');
    root = join(dir.path, 'root');
    const outside = join(dir.path, 'outside');
    await writeDocument(join(outside, 'secret.json'), validDocument('secret'));
    await writeDocument(join(outside, 'doc.json'), validDocument('outside-doc'));
    for (const folder of [root, join(root, 'a'), join(root, 'a', 'b')]) {
      await mkdir(folder, { recursive: true });
      await writeDocument(join(folder, 'doc.json'), validDocument('inside'));
      await symlink(join(root, 'a'), join(folder, 'link-in'));
      await symlink(outside, join(folder, 'link-out'));
      await symlink(join(root, 'doc.json'), join(folder, 'link-in.json'));
      await symlink(join(outside, 'secret.json'), join(folder, 'link-out.json'));
    }
    // Relative symlinks: one climbing to the root (inside), one climbing above it (outside).
    await symlink('../..', join(root, 'a', 'b', 'link-up'));
    await symlink('../..', join(root, 'a', 'link-above'));
    realRoot = await realpath(root);
    resolver = new FileResolver({ root });
    bases = [undefined, join(root, 'main.json'), join(root, 'a', 'main.json'), join(root, 'a', 'b', 'main.json'), join(outside, 'main.json')];
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
