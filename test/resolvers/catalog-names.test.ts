/** DEL-21: a folder's catalog reads each document's meta.name once per version of its file, and never from a document that leads out of the folder. */
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { namedInFolder } from '../../src/resolvers/catalog-names.js';

// Counts the documents read, by path; each read is still the real one.
const reads = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const readFile = (path: string, ...rest: unknown[]) => {
    reads.push(String(path));
    return (fs.readFile as (...all: unknown[]) => unknown)(path, ...rest);
  };
  return { ...fs, readFile };
});

const named = (name: string) => `${JSON.stringify({ meta: { name }, context: [], schema: true })}\n`;

describe('namedInFolder (DEL-21)', () => {
  it('reads an unchanged document once across lookups, and a changed one again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'catalog-names-'));
    await mkdir(join(root, 'team'));
    await writeFile(join(root, 'team', 'a.json'), named('reviewer'));
    await writeFile(join(root, 'b.json'), named('writer'));
    reads.length = 0;
    expect(await namedInFolder(root, 'reviewer')).toEqual({ references: ['./team/a.json'], names: ['a', 'b', 'reviewer', 'writer'] });
    expect(await namedInFolder(root, 'writer')).toEqual({ references: ['./b.json'], names: ['a', 'b', 'reviewer', 'writer'] });
    expect(await namedInFolder(root, 'nobody')).toMatchObject({ references: [] });
    expect(reads.sort()).toEqual([join(root, 'b.json'), join(root, 'team', 'a.json')]);
    await writeFile(join(root, 'b.json'), named('editor'));
    expect(await namedInFolder(root, 'editor')).toMatchObject({ references: ['./b.json'] });
    expect(reads.filter((path) => path === join(root, 'b.json'))).toHaveLength(2);
  });

  it('takes no meta.name from a document that leads out of the folder', async () => {
    const base = await mkdtemp(join(tmpdir(), 'catalog-names-out-'));
    const root = join(base, 'root');
    await mkdir(root);
    await writeFile(join(base, 'outside.json'), named('secret-agent'));
    await symlink(join(base, 'outside.json'), join(root, 'link.json'));
    const match = await namedInFolder(root, 'secret-agent');
    expect(match.references).toEqual([]);
    expect(match.names).toEqual(['link']);
  });
});
