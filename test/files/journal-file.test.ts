/** The journal file (spec/journal.md JOURNAL-1, JOURNAL-2, JOURNAL-7): written line by line, read back with a cut last line ignored and named. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournalFile, readJournalText } from '../../src/files/journal-file.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { tempDir } from '../helpers/cli.js';

function event(name: string, extra: Record<string, unknown> = {}): TraceEvent {
  return { ts: '2026-11-23T00:00:00.000Z', event: name, run: 'run_top', parent: null, depth: 0, ...extra };
}

const line = (value: TraceEvent) => `${JSON.stringify(value)}\n`;

describe('reading a journal', () => {
  it('reads every whole line, and ignores and names a last line cut before its newline (JOURNAL-7)', () => {
    const text = `${line(event('run.started'))}${line(event('journal.started'))}{"ts":"2026-11-23T00:00:01.000Z","event":"model.re`;
    const reading = readJournalText(text, 'run.jsonl');
    expect(reading.events.map((read) => read.event)).toEqual(['run.started', 'journal.started']);
    expect(reading.ignored).toBe('line 3 (50 bytes, cut off): {"ts":"2026-11-23T00:00:01.000Z","event":"model.re');
    expect(reading.completeBytes).toBe(Buffer.byteLength(text) - 50);
  });

  it('ignores a last line without its newline even when it parses: it is the event in flight', () => {
    const reading = readJournalText(`${line(event('run.started'))}${JSON.stringify(event('model.request'))}`, 'run.jsonl');
    expect(reading.events).toHaveLength(1);
    expect(reading.ignored).toMatch(/^line 2 \(\d+ bytes, cut off\): \{"ts"/);
  });

  it('refuses a line in the middle that is not JSON, or not an event, naming the file and the line', () => {
    expect(() => readJournalText(`${line(event('run.started'))}{oops\n${line(event('journal.started'))}`, 'run.jsonl')).toThrow(
      /^run\.jsonl:2:\d+: the journal's line 2 is not JSON \(.*\); only its last line may be cut off\.$/,
    );
    expect(() => readJournalText(`${line(event('run.started'))}[1,2]\n`, 'run.jsonl')).toThrow(
      /^run\.jsonl:2: the journal's line 2 is not a trace event: expected an object with "event" and "run" strings\.$/,
    );
  });
});

describe('opening a journal file', () => {
  it('replaces the file to start a run, and appends after the whole lines to resume, cutting the partial one off', () => {
    const path = join(tempDir(), 'run.jsonl');
    writeFileSync(path, 'old content\n');
    const created = openJournalFile(path, 'create');
    created.append(event('run.started'));
    created.append(event('journal.started'));
    created.close();
    expect(readFileSync(path, 'utf8')).toBe(`${line(event('run.started'))}${line(event('journal.started'))}`);

    writeFileSync(path, `${readFileSync(path, 'utf8')}{"ts":"cut`);
    const resumed = openJournalFile(path, 'resume');
    expect(resumed.events).toHaveLength(2);
    expect(resumed.ignored).toMatch(/^line 3 \(10 bytes, cut off\)/);
    resumed.append(event('journal.resumed'));
    resumed.close();
    expect(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text).event),
    ).toEqual(['run.started', 'journal.started', 'journal.resumed']);
    expect(resumed.error).toBeUndefined();
  });

  it('says when there is no journal to resume, or it cannot be written', () => {
    const folder = tempDir();
    expect(() => openJournalFile(join(folder, 'none.jsonl'), 'resume')).toThrow(/^Cannot resume from .*none\.jsonl: there is no such file\.$/);
    expect(() => openJournalFile(join(folder, 'missing', 'run.jsonl'), 'create')).toThrow(/^Cannot open the journal .*run\.jsonl for writing: ENOENT/);
  });
});
