/** Tests of RunSession (src/cli/run-session.ts): what a run holds open is closed once, however often it is asked. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../../src/cli/run-session.js';
import { createRuntime } from '../../src/create-runtime.js';
import { openJournalFile } from '../../src/files/journal-file.js';
import { jsonlFileSink } from '../../src/files/jsonl-file-sink.js';

describe('RunSession', () => {
  it('closes the trace, the journal, the resolvers and the idle watch once, whether asked once or twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-session-'));
    const session = new RunSession(openJournalFile(join(dir, 'journal.jsonl'), 'create'));
    session.sink = jsonlFileSink(join(dir, 'trace.jsonl'));
    session.runtime = createRuntime({ root: dir });
    let stops = 0;
    session.stopIdle = () => {
      stops += 1;
    };
    session.sink({ ts: new Date(0).toISOString(), event: 'run.started', run: 'run_1', parent: null, depth: 0 } as never);
    await session.close();
    await session.close();
    expect(stops).toBe(1);
    expect(session.sink.error).toBeUndefined();
    expect(session.journal?.error).toBeUndefined();
    expect(readFileSync(join(dir, 'trace.jsonl'), 'utf8')).toContain('"run.started"');
  });

  it('closes nothing it was not given: a setup that failed before anything opened closes cleanly', async () => {
    await expect(new RunSession().close()).resolves.toBeUndefined();
  });
});
