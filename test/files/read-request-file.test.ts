/** Unit tests of src/files/read-request-file.ts through Runtime.load: a Request file read, parsed and validated, or refused naming its path. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRequestFile } from '../../src/files/read-request-file.js';
import { RequestError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';

describe('runtime.load with readRequestFile', () => {
  const folder = mkdtempSync(join(tmpdir(), 'load-request-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const runtime = new Runtime({ readRequestFile });

  it('reads, parses and validates a file', async () => {
    const path = join(folder, 'greeter.json');
    writeFileSync(path, JSON.stringify({ context: [{ type: 'user', content: 'Hi.' }], schema: true }));
    expect(await runtime.load(path)).toEqual({
      document: { context: [{ type: 'user', text: 'Hi.' }], schema: true },
      location: path,
      name: 'greeter',
    });
  });

  it('refuses a missing file with delegate_not_found, naming the path', async () => {
    const path = join(folder, 'missing.json');
    const error = await runtime.load(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestError);
    expect(error).toMatchObject({ code: 'delegate_not_found', problems: [{ document: path, pointer: '' }] });
  });

  it('refuses a folder with invalid_request', async () => {
    const error = await runtime.load(folder).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request', problems: [{ document: folder, message: expect.stringMatching(/^Expected a readable file/) }] });
  });

  it('reports invalid content against the file path', async () => {
    const path = join(folder, 'bad.json');
    writeFileSync(path, JSON.stringify({ context: [{ type: 'nope' }], schema: true }));
    const error = await runtime.load(path).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request', problems: [{ document: path, pointer: '/context/0/type' }] });
  });
});

describe('runtime.load without readRequestFile', () => {
  it('refuses with usage_error, saying how to give the Runtime a way to read files', async () => {
    const error = await new Runtime().load('/requests/doc.json').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'usage_error', message: expect.stringContaining('createRuntime()') });
  });
});
