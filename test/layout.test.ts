/** The folder layout the README describes: the core imports nothing from the folders built on it, and reads or writes no files. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const PROTOCOL = join(import.meta.dirname, '..', 'src', 'protocol');

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the layout', () => {
  it('keeps src/protocol free of imports from the other folders and of vendor SDKs', () => {
    const offending: string[] = [];
    for (const file of sourcesUnder(PROTOCOL)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)) {
        const target = match[1] as string;
        // Relative imports must stay inside src/protocol, from whichever of its folders they are
        // written; the document schemas of spec/schemas are the protocol's own, imported as JSON modules.
        const resolved = relative(PROTOCOL, resolve(dirname(file), target));
        const upward = target.startsWith('.') && resolved.startsWith('..') && !/^\.\.\/\.\.\/spec\/schemas\/[\w.-]+\.json$/.test(resolved);
        const vendor = /^(openai|@anthropic-ai\/|@modelcontextprotocol\/|undici)/.test(target);
        if (upward || vendor) offending.push(`${file}: ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('keeps src/protocol free of file I/O: files are read and written at the edge (src/files)', () => {
    const offending = sourcesUnder(PROTOCOL).filter((file) => /from 'node:fs(\/promises)?'/.test(readFileSync(file, 'utf8')));
    expect(offending).toEqual([]);
  });
});
