/** End to end through the built binary: a document whose data writes cannot be read is refused before anything runs (DOC-5, VAR-12). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

/** Writes a document into a fresh folder and returns its path. */
function documentFile(document: unknown): string {
  const file = join(tempDir(), 'writes.json');
  writeFileSync(file, JSON.stringify(document));
  return file;
}

describe('delegate-run refuses unreadable data writes when the document loads', () => {
  it('exits 2 naming /context/<i>/_path, with no run and nothing traced', async () => {
    const file = documentFile({ context: [{ type: 'data', kind: 'k', data: 1, _path: 'a..b' }], schema: true });
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([file, '--json', '--trace', trace]);
    expect(result.code).toBe(2);
    const answer = JSON.parse(result.stdout);
    expect(answer).toMatchObject({ ok: false, run: null, error: { code: 'invalid_request' } });
    expect(answer.error.message).toContain(`${file}#/context/0/_path: The data message of kind "k" has the _path "a..b"`);
    const events = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
    expect(events).not.toContain('run.started');
  });

  it('exits 2 naming /context/<i>/_outputMethod for an unknown method', async () => {
    const file = documentFile({
      context: [
        { type: 'user', text: 'x' },
        { type: 'data', kind: 'k', data: 1, _path: 'a', _outputMethod: 'replace' },
      ],
      schema: true,
    });
    const result = await runCli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}#/context/1/_outputMethod`);
  });
});
