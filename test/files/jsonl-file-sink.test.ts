/** Unit tests of src/files/jsonl-file-sink.ts: the JSONL trace file written as it happens (TRACE-2), write failures (TRACE-14). */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BATCH_ITEMS } from '../../src/files/batched-log.js';
import { jsonlFileSink } from '../../src/files/jsonl-file-sink.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';

const event = (name: string): TraceEvent => ({ ts: new Date(0).toISOString(), event: name, run: 'run_1', parent: null, depth: 0 });

describe('jsonlFileSink (TRACE-2)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'trace-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('writes the events of one turn of the event loop as JSON lines, in one write at its end', async () => {
    const path = join(folder, 'turn.jsonl');
    const sink = jsonlFileSink(path);
    sink(event('run.started'));
    sink(event('model.request'));
    expect(readFileSync(path, 'utf8')).toBe('');
    await new Promise((turn) => setImmediate(turn));
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(event('run.started'))}\n${JSON.stringify(event('model.request'))}\n`);
    sink(event('run.completed'));
    await new Promise((turn) => setImmediate(turn));
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as TraceEvent).event)).toEqual(['run.started', 'model.request', 'run.completed']);
    sink.close();
  });

  it('writes a turn of more than BATCH_ITEMS events in passes as they come, every line in order', async () => {
    const path = join(folder, 'wide-turn.jsonl');
    const sink = jsonlFileSink(path);
    const count = 2 * BATCH_ITEMS + 452;
    for (let index = 0; index < count; index++) sink({ ...event('call.started'), call: String(index) });
    // Two full passes are written within the turn, so a wide fan-out holds at most one pass of events.
    expect(readFileSync(path, 'utf8').trimEnd().split('\n')).toHaveLength(2 * BATCH_ITEMS);
    await new Promise((turn) => setImmediate(turn));
    const calls = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as TraceEvent).call);
    expect(calls).toEqual(Array.from({ length: count }, (_, index) => String(index)));
    sink.close();
  });

  it('writes what is pending when it is closed, and when the process exits without closing it', () => {
    const path = join(folder, 'closed-early.jsonl');
    const sink = jsonlFileSink(path);
    sink(event('run.started'));
    sink.close();
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(event('run.started'))}\n`);
    const exited = join(folder, 'exited.jsonl');
    const script = [
      `const { jsonlFileSink } = await import(${JSON.stringify(new URL('../../dist/files/jsonl-file-sink.js', import.meta.url).href)});`,
      `const sink = jsonlFileSink(${JSON.stringify(exited)});`,
      `for (let n = 0; n < 3; n++) sink({ ts: 'x', event: 'e' + n, run: 'r', parent: null, depth: 0 });`,
      'process.exit(0);',
    ].join('\n');
    execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(
      readFileSync(exited, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as TraceEvent).event),
    ).toEqual(['e0', 'e1', 'e2']);
  });

  it('flushes a durable file in groups: the events of a turn are written at its end, and whenDurable resolves once they are on the disk (JOURNAL-2)', async () => {
    const path = join(folder, 'durable.jsonl');
    const sink = jsonlFileSink(path, { durable: true });
    // Nothing emitted yet: nothing to wait for.
    expect(sink.whenDurable()).toBeUndefined();
    const count = 300;
    const waits: Promise<void>[] = [];
    // A wide turn: every event's effect waits, and one flush covers them all.
    for (let index = 0; index < count; index++) {
      sink({ ...event('call.started'), call: String(index) });
      waits.push(sink.whenDurable() as Promise<void>);
    }
    expect(waits.every((wait) => wait instanceof Promise)).toBe(true);
    // Effects waiting for the same events share one promise.
    expect(sink.whenDurable()).toBe(waits.at(-1));
    expect(readFileSync(path, 'utf8')).toBe('');
    await Promise.all(waits);
    const calls = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as TraceEvent).call);
    expect(calls).toEqual(Array.from({ length: count }, (_, index) => String(index)));
    expect(sink.whenDurable()).toBeUndefined();
    // An event no one waits for is written at the turn's end all the same, and flushed by close.
    sink(event('run.completed'));
    await new Promise((turn) => setImmediate(turn));
    expect(readFileSync(path, 'utf8').trimEnd().split('\n')).toHaveLength(count + 1);
    sink(event('run.closing'));
    const last = sink.whenDurable();
    sink.close();
    await last;
    expect(sink.whenDurable()).toBeUndefined();
    expect((JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) as string) as TraceEvent).event).toBe('run.closing');
    expect(sink.error).toBeUndefined();
  });

  it('a plain trace file waits for nothing', () => {
    const sink = jsonlFileSink(join(folder, 'plain.jsonl'));
    sink(event('run.started'));
    expect(sink.whenDurable()).toBeUndefined();
    sink.close();
  });

  it('writes lines with characters of several bytes and lines larger than a pipe buffer whole', () => {
    const path = join(folder, 'wide.jsonl');
    const sink = jsonlFileSink(path);
    const wide = { ...event('model.response'), text: `café ☕ 𝄞 ${'é'.repeat(70_000)}` } as TraceEvent;
    sink(wide);
    sink(event('run.completed'));
    sink.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as TraceEvent)).toEqual([wide, event('run.completed')]);
  });

  it('replaces an existing file rather than appending to it', () => {
    const path = join(folder, 'replaced.jsonl');
    writeFileSync(path, 'old content\n');
    const sink = jsonlFileSink(path);
    sink.close();
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('writes nothing after close, and closing twice is harmless', () => {
    const path = join(folder, 'closed.jsonl');
    const sink = jsonlFileSink(path);
    sink(event('a'));
    sink.close();
    expect(() => sink.close()).not.toThrow();
    expect(() => sink(event('b'))).not.toThrow();
    expect(readFileSync(path, 'utf8').trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('jsonlFileSink write failures (TRACE-14)', () => {
  it('throws when the file cannot be opened', () => {
    expect(() => jsonlFileSink(join(tmpdir(), 'no-such-folder-for-traces', 'trace.jsonl'))).toThrow(/ENOENT/);
  });

  it.skipIf(!existsSync('/dev/full'))('keeps the first write failure (ENOSPC) instead of throwing, and writes nothing more', async () => {
    const sink = jsonlFileSink('/dev/full');
    expect(sink.error).toBeUndefined();
    expect(() => sink(event('run.started'))).not.toThrow();
    await new Promise((turn) => setImmediate(turn));
    const first = sink.error;
    expect(first?.message).toMatch(/ENOSPC/);
    sink(event('run.completed'));
    sink.close();
    expect(sink.error).toBe(first);
  });

  it.skipIf(!existsSync('/dev/full'))(
    'lets what waits for a durable file that cannot be written go on: the run is not held by its journal (TRACE-14)',
    async () => {
      const sink = jsonlFileSink('/dev/full', { durable: true, append: true });
      sink(event('call.started'));
      const wait = sink.whenDurable();
      expect(wait).toBeInstanceOf(Promise);
      await wait;
      expect(sink.error?.message).toMatch(/ENOSPC/);
      expect(sink.whenDurable()).toBeUndefined();
      sink.close();
    },
  );

  it('lets every waiter go on when an fdatasync fails mid-run, those of the group flushing and those of the next (TRACE-14, JOURNAL-13)', async () => {
    // Writes to a FIFO succeed while fdatasync on it fails (EINVAL): a disk that takes the events but cannot flush them.
    const folder = mkdtempSync(join(tmpdir(), 'trace-fifo-'));
    const fifo = join(folder, 'journal.jsonl');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const sink = jsonlFileSink(fifo, { durable: true, append: true });
      sink(event('call.started'));
      const first = sink.whenDurable();
      // The turn's end writes the event and starts the flush; the next turn's event waits for the flush after it.
      await new Promise((turn) => setImmediate(turn));
      sink(event('model.request'));
      const second = sink.whenDurable();
      expect(second).toBeInstanceOf(Promise);
      expect(second).not.toBe(first);
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('an effect still waits for a journal whose flush failed')), 10_000);
      });
      await Promise.race([Promise.all([first, second]), stalled]).finally(() => clearTimeout(timer));
      expect(sink.error?.message).toMatch(/EINVAL/);
      expect(sink.whenDurable()).toBeUndefined();
      expect(() => sink.close()).not.toThrow();
    } finally {
      closeSync(reader);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
