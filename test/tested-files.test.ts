/** Every source file over 250 lines has a test file of its own name, or a line in test/README.md naming where it is tested. */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** The files under `folder` whose names end with `suffix`, as paths from the repository's root. */
function filesUnder(folder: string, suffix: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe('the tests', () => {
  it('name where each source file over 250 lines is tested: its own test file or a line of test/README.md', () => {
    const tests = new Set(filesUnder('test', '.test.ts').map((file) => basename(file, '.test.ts')));
    const readme = readFileSync(join(ROOT, 'test', 'README.md'), 'utf8');
    // By file name, so a file moved to another folder keeps its line.
    const listed = (name: string) => new RegExp(`/${name.replace(/\./g, '\\.')}\``).test(readme);
    const untested = filesUnder('src', '.ts')
      .filter((file) => (readFileSync(join(ROOT, file), 'utf8').match(/\n/g) ?? []).length > 250)
      .filter((file) => !tests.has(basename(file, '.ts')) && !listed(basename(file)));
    expect(untested).toEqual([]);
  });
});
