/** The folder layout the README describes: the core imports nothing from the folders built on it. */
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
        // Relative imports must stay inside src/protocol, from whichever of its folders they are written.
        const upward = target.startsWith('.') && relative(PROTOCOL, resolve(dirname(file), target)).startsWith('..');
        const vendor = /^(openai|@anthropic-ai\/|undici)/.test(target);
        if (upward || vendor) offending.push(`${file}: ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
