/** CLI-15 in detail: which existing files --trace and --record may replace. */
import { linkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOutputPaths, type OutputPath } from '../../src/cli/output-paths.js';
import { tempDir } from '../helpers/cli.js';

const trace = (path: string): OutputPath => ({ flag: '--trace', given: path, path });
const record = (path: string): OutputPath => ({ flag: '--record', given: path, path });

describe('checkOutputPaths (CLI-15)', () => {
  it('refuses an output that is a named input, through a symbolic or a hard link too', () => {
    const folder = tempDir();
    const request = join(folder, 'request.json');
    writeFileSync(request, 'not even JSON');
    symlinkSync(request, join(folder, 'symbolic.jsonl'));
    linkSync(request, join(folder, 'hard.jsonl'));
    const inputs = [{ path: request, what: 'the request' }];
    for (const path of [request, join(folder, 'symbolic.jsonl'), join(folder, 'hard.jsonl')]) {
      expect(() => checkOutputPaths([trace(path)], inputs)).toThrow(/is the request/);
      expect(() => checkOutputPaths([record(path)], inputs)).toThrow(/is the request/);
    }
  });

  it('refuses a trace over any file holding one JSON document, the form of every JSON file a run may read', () => {
    const folder = tempDir();
    const delegate = join(folder, 'delegate.json');
    writeFileSync(delegate, JSON.stringify({ context: [], schema: {} }, null, 2));
    const single = join(folder, 'single-line.jsonl');
    writeFileSync(single, '{"a":1}\n');
    expect(() => checkOutputPaths([trace(delegate)], [])).toThrow(/holds a JSON document/);
    expect(() => checkOutputPaths([trace(single)], [])).toThrow(/holds a JSON document/);
  });

  it('lets a trace replace an earlier trace, an empty file, text that is not JSON, or a device; and create a new file', () => {
    const folder = tempDir();
    const earlier = join(folder, 'earlier.json');
    writeFileSync(earlier, '{"event":"run.started"}\n{"event":"run.completed"}\n');
    const empty = join(folder, 'empty.json');
    writeFileSync(empty, '');
    const notes = join(folder, 'notes.txt');
    writeFileSync(notes, 'hello\n');
    for (const path of [earlier, empty, notes, '/dev/null', join(folder, 'new.jsonl')]) expect(() => checkOutputPaths([trace(path)], [])).not.toThrow();
  });

  it('lets --record replace a cassette (recording again), but not another JSON document', () => {
    const folder = tempDir();
    const cassette = join(folder, 'old.cassette.json');
    writeFileSync(cassette, JSON.stringify({ version: 1, entries: [] }));
    const request = join(folder, 'helper.json');
    writeFileSync(request, JSON.stringify({ context: [], schema: {} }));
    expect(() => checkOutputPaths([record(cassette)], [])).not.toThrow();
    expect(() => checkOutputPaths([record(request)], [])).toThrow(/not a cassette/);
  });

  it('refuses --trace and --record naming one file', () => {
    const path = join(tempDir(), 'both.jsonl');
    expect(() => checkOutputPaths([trace(path), record(path)], [])).toThrow(/name the same file/);
  });
});
