/** The journal file (spec/journal.md JOURNAL-1, JOURNAL-2, JOURNAL-7): written line by line, read back with a cut last line ignored and named. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
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

describe('the journal lock (JOURNAL-11)', () => {
  /** A pid that was this host's and is gone: a process that has exited. */
  const gonePid = () => spawnSync(process.execPath, ['-e', '']).pid as number;

  it('refuses a second writer of a journal while the first holds it, naming the holder, and lets one in once it closes', () => {
    const path = join(tempDir(), 'run.jsonl');
    const first = openJournalFile(path, 'create');
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => openJournalFile(path, 'create')).toThrow(`is being written by process ${process.pid}`);
    expect(() => openJournalFile(path, 'resume')).toThrow(`is being written by process ${process.pid}`);
    first.append(event('run.started'));
    first.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    const resumed = openJournalFile(path, 'resume');
    expect(resumed.events).toHaveLength(1);
    resumed.close();
  });

  it('takes over a lock whose process is gone from this host, or that names no holder and is old', () => {
    const path = join(tempDir(), 'run.jsonl');
    writeFileSync(path, '');
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: gonePid(), host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
    openJournalFile(path, 'resume').close();
    writeFileSync(`${path}.lock`, '');
    utimesSync(`${path}.lock`, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const store = openJournalFile(path, 'resume');
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8')).pid).toBe(process.pid);
    store.close();
  });

  it('leaves a stale lock to the writer taking it over at this moment, and clears the guard of one killed while doing so', () => {
    const path = join(tempDir(), 'run.jsonl');
    writeFileSync(path, '');
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: gonePid(), host: hostname(), since: '2026-01-01T00:00:00.000Z' }));
    writeFileSync(`${path}.lock.takeover`, '');
    expect(() => openJournalFile(path, 'resume')).toThrow(
      /is being locked by another run just now \(another run is taking over the stale lock of process \d+\)/,
    );
    utimesSync(`${path}.lock.takeover`, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    openJournalFile(path, 'resume').close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(existsSync(`${path}.lock.takeover`)).toBe(false);
  });

  it('never takes over a lock of another host, whose process cannot be checked, nor a young one being written', () => {
    const path = join(tempDir(), 'run.jsonl');
    writeFileSync(path, line(event('run.started')));
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: gonePid(), host: 'elsewhere.example', since: '2026-01-01T00:00:00.000Z' }));
    expect(() => openJournalFile(path, 'resume')).toThrow(/is being written by process \d+ on elsewhere\.example .*remove its lock/);
    writeFileSync(`${path}.lock`, '');
    expect(() => openJournalFile(path, 'create')).toThrow(/is being locked by another run just now/);
    // Refused, the journal is not replaced.
    expect(readFileSync(path, 'utf8')).toBe(line(event('run.started')));
  });
});
