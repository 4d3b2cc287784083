/** The JSONL trace file: a trace listener writing the events of each turn of the event loop at its end, a journal's flushed to disk in groups (spec/trace.md TRACE-2, TRACE-14; spec/journal.md JOURNAL-2). */
import { closeSync, fdatasync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { type TraceEvent, type TraceListener, traceLine } from '../protocol/trace/trace.js';
import { BATCH_ITEMS, turnBatch } from './batched-log.js';

/** A listener writing a JSONL trace file; see {@link jsonlFileSink}. */
export interface JsonlFileSink extends TraceListener {
  /** Releases the file; harmless when called again. */
  close(): void;
  /** The first failure to write (or close) the file, if any; the file stops at the event before it. */
  readonly error: Error | undefined;
  /**
   * With `durable`: a promise that every event emitted so far is on the disk, resolved by the
   * `fdatasync` that covers the last of them (JOURNAL-2), or `undefined` when they are on it already
   * (or the file failed, TRACE-14: the run goes on without it). Without `durable`: `undefined`.
   */
  whenDurable(): Promise<void> | undefined;
}

/** How {@link jsonlFileSink} opens and writes its file. */
export interface JsonlFileSinkOptions {
  /** Append to the file instead of replacing it (a resumed journal, JOURNAL-9). */
  append?: boolean;
  /** Flush the events to the disk (`fdatasync`), not only to the operating system, and say when they are there: {@link JsonlFileSink.whenDurable} (a journal, JOURNAL-2). */
  durable?: boolean;
}

/** Every event weighs the same in a trace file's batch. */
const one = () => 1;

/** The JSONL lines of a batch of events, in order. */
function linesOf(events: TraceEvent[]): string {
  let text = '';
  for (const event of events) text += traceLine(event);
  return text;
}

/** What the trace files still open hold: a process that exits writes it first (and a journal flushes it to disk). */
const unflushed = new Set<() => void>();
process.on('exit', () => {
  for (const flush of unflushed) flush();
});

/**
 * A listener writing JSONL to a file (TRACE-2): the events of one turn of the event loop in one
 * write at its end, every pending event written before the file is closed and when the process
 * exits, so a run that fails, is cancelled or exits leaves a complete trace. With `durable` (a
 * journal, JOURNAL-13) the written events are also flushed to the disk, in groups: one `fdatasync`
 * at a time, off the event loop, each covering every event written before it began; an effect waits
 * for the one that covers its event ({@link JsonlFileSink.whenDurable}, JOURNAL-2); closing the file
 * and the process exiting flush what is left. The listener never throws: a run is not changed by
 * its observers, so a write that fails (ENOSPC, EIO) is kept in `error`, nothing more is written,
 * and the caller reports it (TRACE-14). Opening the file throws as `openSync` does.
 */
export function jsonlFileSink(path: string, options: JsonlFileSinkOptions = {}): JsonlFileSink {
  const descriptor = openSync(path, options.append ? 'a' : 'w');
  let open = true;
  let failure: Error | undefined;
  const fail = (error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  const durability = options.durable ? groupFlush(descriptor, fail) : undefined;
  const write = (events: TraceEvent[]) => {
    if (!open || failure) return;
    try {
      writeAll(descriptor, linesOf(events));
      durability?.written(events.length);
    } catch (error) {
      fail(error);
      durability?.release();
    }
  };
  // A trace file takes a turn's events in one system call, serialised together at the turn's end
  // (events are not changed once emitted, TRACE-23); a journal too, flushed to disk in groups.
  const batch = turnBatch<TraceEvent>(write, BATCH_ITEMS, one);
  const finish = () => {
    batch.flush();
    if (!failure) durability?.flushNow();
  };
  unflushed.add(finish);
  const listener = (event: TraceEvent) => {
    if (!open || failure) return;
    durability?.appended();
    batch.add(event);
  };
  return Object.defineProperties(listener, {
    close: {
      value: () => {
        if (!open) return;
        finish();
        unflushed.delete(finish);
        open = false;
        durability?.release();
        // A flush still running off the loop keeps the descriptor until it ends: it is closed then.
        if (durability?.closeAfterFlush(() => closeQuietly(descriptor, fail))) return;
        closeQuietly(descriptor, fail);
      },
    },
    error: { get: () => failure },
    whenDurable: { value: () => (open && !failure ? durability?.whenDurable() : undefined) },
  }) as JsonlFileSink;
}

function closeQuietly(descriptor: number, fail: (error: unknown) => void): void {
  try {
    closeSync(descriptor);
  } catch (error) {
    fail(error);
  }
}

/** The group flush of a durable file: which events are emitted, written and on the disk, and who waits for which. */
interface GroupFlush {
  /** One more event was emitted (it is written at the turn's end). */
  appended(): void;
  /** `count` events were written to the file: a flush starts unless one is running. */
  written(count: number): void;
  /** A promise that the events emitted so far are on the disk, or `undefined` when they are. */
  whenDurable(): Promise<void> | undefined;
  /** Flushes what is written now, on the loop (closing, exiting). */
  flushNow(): void;
  /** Lets every waiter go on: the file failed or is closed. */
  release(): void;
  /** Runs `close` once the flush running off the loop ends; false when none runs. */
  closeAfterFlush(close: () => void): boolean;
}

/**
 * Group commit (JOURNAL-13): an `fdatasync` covers every event written before it began, so one runs
 * at a time, off the event loop, as soon as events are written; events written meanwhile wait for
 * the next, which begins when it ends. A failed flush is a failure of the file (TRACE-14) and lets
 * every waiter go on.
 */
function groupFlush(descriptor: number, fail: (error: unknown) => void): GroupFlush {
  // Counts of events: emitted, written to the file, and known on the disk.
  let appended = 0;
  let written = 0;
  let durable = 0;
  let flushing = false;
  let afterFlush: (() => void) | undefined;
  let waiters: { count: number; resume: () => void; promise: Promise<void> }[] = [];
  const settle = (count: number) => {
    durable = Math.max(durable, count);
    if (waiters.length === 0) return;
    const ready = waiters.filter((waiter) => waiter.count <= durable);
    waiters = waiters.filter((waiter) => waiter.count > durable);
    for (const waiter of ready) waiter.resume();
  };
  const release = () => {
    const all = waiters;
    waiters = [];
    for (const waiter of all) waiter.resume();
  };
  const start = () => {
    if (flushing || written <= durable) return;
    flushing = true;
    const covered = written;
    fdatasync(descriptor, (error) => {
      flushing = false;
      if (afterFlush) {
        // Closed meanwhile: the close flushed everything on the loop.
        afterFlush();
        return;
      }
      if (error) {
        fail(error);
        release();
        return;
      }
      settle(covered);
      start();
    });
  };
  return {
    appended() {
      appended += 1;
    },
    written(count) {
      written += count;
      start();
    },
    whenDurable() {
      if (durable >= appended) return undefined;
      // The effects of one turn wait for the same events: they share one promise.
      const last = waiters.at(-1);
      if (last?.count === appended) return last.promise;
      const count = appended;
      const waiter = { count, resume: () => {}, promise: Promise.resolve() };
      waiter.promise = new Promise<void>((resolve) => {
        waiter.resume = resolve;
      });
      waiters.push(waiter);
      const promise = waiter.promise;
      start();
      return promise;
    },
    flushNow() {
      if (written <= durable) return;
      try {
        fdatasyncSync(descriptor);
        settle(written);
      } catch (error) {
        fail(error);
        release();
      }
    },
    release,
    closeAfterFlush(close) {
      if (!flushing) return false;
      afterFlush = close;
      return true;
    },
  };
}

/**
 * Writes all of `text`. The string goes to the file as is (no Buffer made in JavaScript per event):
 * a file takes it whole; a pipe or a terminal may take less, and the rest is written from its bytes.
 */
function writeAll(descriptor: number, text: string): void {
  let written = writeSync(descriptor, text);
  const length = Buffer.byteLength(text, 'utf8');
  if (written >= length) return;
  const bytes = Buffer.from(text, 'utf8');
  while (written < length) written += writeSync(descriptor, bytes, written, length - written);
}
