/** Property test of delegates by name (DEL-21): the document's registry wins over the runtime's, and a name never resolves outside the root. */
import { mkdir, realpath, symlink } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegateError } from '../../src/protocol/errors.js';
import { DelegateRegistry } from '../../src/resolvers/delegate-registry.js';
import { isInside } from '../../src/resolvers/reference-forms.js';
import { createDefaultResolvers } from '../../src/resolvers/resolver-registry.js';
import { makeTempDir, validDocument, writeDocument, type TempDir } from '../resolvers/helpers.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(150);

const NAMES = ['SummarizerAgent', 'translator', 'speaker-EN', 'x1'];
/** Paths a registry entry may hold: inside the root, climbing out of it, through a symbolic link out of it, or missing. */
const TARGETS = [
  './a.json',
  '../a.json',
  './b.json',
  'agents/b.json',
  '../../outside/o.json',
  '../outside/o.json',
  './link.json',
  '../link.json',
  './missing.json',
];

const registryArbitrary = fc.dictionary(fc.constantFrom(...NAMES), fc.constantFrom(...TARGETS), { maxKeys: NAMES.length });

describe('delegates by name', () => {
  let dir: TempDir;
  let root: string;
  let realRoot: string;
  let base: string;

  beforeAll(async () => {
    dir = await makeTempDir('names-property-');
    root = join(dir.path, 'root');
    await mkdir(join(root, 'agents'), { recursive: true });
    await writeDocument(join(root, 'a.json'), validDocument('root-a'));
    await writeDocument(join(root, 'agents', 'a.json'), validDocument('agents-a'));
    await writeDocument(join(root, 'b.json'), validDocument('root-b'));
    await writeDocument(join(root, 'agents', 'b.json'), validDocument('agents-b'));
    await writeDocument(join(root, 'agents', 'agents', 'b.json'), validDocument('agents-agents-b'));
    await writeDocument(join(dir.path, 'outside', 'o.json'), validDocument('outside'));
    await symlink(join(dir.path, 'outside', 'o.json'), join(root, 'link.json'));
    await symlink(join(dir.path, 'outside', 'o.json'), join(root, 'agents', 'link.json'));
    realRoot = await realpath(root);
    base = join(root, 'agents', 'main.json');
  });
  afterAll(async () => {
    await dir.cleanup();
  });

  it("resolves a name through the document's registry first, then the runtime's, never outside the root", async () => {
    const seen = { document: 0, runtime: 0, forbidden: 0, notFound: 0 };
    await fc.assert(
      fc.asyncProperty(registryArbitrary, registryArbitrary, fc.constantFrom(...NAMES), async (documentNames, runtimeNames, name) => {
        const resolvers = createDefaultResolvers({ root, delegates: new DelegateRegistry(runtimeNames) });
        const expected: { registry: 'document' | 'runtime'; path: string } | undefined =
          name in documentNames
            ? { registry: 'document', path: resolvePath(dirname(base), documentNames[name]!) }
            : name in runtimeNames
              ? { registry: 'runtime', path: resolvePath(root, runtimeNames[name]!) }
              : undefined;
        try {
          const resolved = await resolvers.resolve(name, { base, toolName: 't', tool: { type: 'object' }, delegates: documentNames });
          // Found in the registry that comes first, at the path that registry's entry names, really inside the root.
          expect(expected).toBeDefined();
          expect(resolved.registry).toBe(expected?.registry);
          expect(resolved.location).toBe(expected?.path);
          expect(isInside(realRoot, await realpath(resolved.location))).toBe(true);
          seen[resolved.registry as 'document' | 'runtime'] += 1;
        } catch (error) {
          expect(error).toBeInstanceOf(DelegateError);
          const code = (error as DelegateError).code;
          if (expected === undefined) {
            expect(code).toBe('delegate_not_found');
            expect((error as DelegateError).message).toContain('no delegate has that name');
          } else {
            // Only an entry that leaves the root (lexically or through a link) or names nothing fails.
            const leaves = !isInside(root, expected.path) || expected.path.endsWith('link.json');
            expect(code).toBe(leaves ? 'delegate_forbidden' : 'delegate_not_found');
            expect((error as DelegateError).data).toMatchObject({ name, registry: expected.registry });
          }
          if (code === 'delegate_forbidden') seen.forbidden += 1;
          else seen.notFound += 1;
        }
      }),
      config,
    );
    // The generated cases reach every outcome.
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(0);
  });
});
