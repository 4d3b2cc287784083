/** Unit tests of src/cli/entry.ts: an executable's module starts only when it is the script node runs. */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isEntryPoint } from '../../src/cli/entry.js';

describe('isEntryPoint', () => {
  it('is true for the script node was asked to run, reached through its real path', () => {
    expect(isEntryPoint(pathToFileURL(realpathSync(process.argv[1] as string)).href)).toBe(true);
  });

  it('is false for a module merely imported', () => {
    expect(isEntryPoint(import.meta.url)).toBe(false);
  });
});
