/** Unit tests of src/files/read-document-file.ts: a document file read and checked, or one problem naming it. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDocumentFile, readDocumentFileSync } from '../../src/files/read-document-file.js';

describe('readDocumentFile', () => {
  const folder = mkdtempSync(join(tmpdir(), 'read-document-'));
  const file = join(folder, 'models.json');
  writeFileSync(file, '{"models":{"openai:x":{"tier":"quick"}}}');

  it('reads a file, async and sync alike', async () => {
    const sync = readDocumentFileSync(file, 'models.schema.json');
    expect(await readDocumentFile(file, 'models.schema.json')).toEqual(sync);
    expect(sync.ok).toBe(false);
    if (!sync.ok) expect(sync.problems[0]).toMatchObject({ document: file, pointer: expect.stringMatching(/^\/models\/openai:x/) });
  });

  it('turns an unreadable file into one problem naming it', async () => {
    const missing = join(folder, 'missing.json');
    const reading = await readDocumentFile(missing);
    expect(reading.ok).toBe(false);
    if (!reading.ok)
      expect(reading.problems).toEqual([
        expect.objectContaining({ document: missing, pointer: '', message: expect.stringMatching(/^The file cannot be read: /) }),
      ]);
  });
});
