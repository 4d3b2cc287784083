/** The JSONL trace file: a trace listener writing the events of each turn of the event loop at its end, and every event at once for a journal (spec/trace.md TRACE-2, TRACE-14). */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { type TraceEvent, type TraceListener, traceLine } from '../protocol/trace/trace.js';
import { BATCH_ITEMS, type TurnBatch, turnBatch } from './batched-log.js';

/** A listener writing a JSONL trace file; see {@link jsonlFileSink}. */
export interface JsonlFileSink extends TraceListener {
  /** Releases the file; harmless when called again. */
  close(): void;
  /** The first failure to write (or close) the file, if any; the file stops at the event before it. */
  readonly error: Error | undefined;
}

/** How {@link jsonlFileSink} opens and writes its file. */
export interface JsonlFileSinkOptions {
  /** Append to the file instead of replacing it (a resumed journal, JOURNAL-9). */
  append?: boolean;
  /** Flush each event to the disk (`fdatasync`) before going on, not only to the operating system (a journal, JOURNAL-2). */
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

/** The batches of the trace files still open: a process that exits writes what they hold first. */
const unflushed = new Set<TurnBatch<TraceEvent>>();
process.on('exit', () => {
  for (const batch of unflushed) batch.flush();
});

/**
 * A listener writing JSONL to a file (TRACE-2): the events of one turn of the event loop in one
 * write at its end, every pending event written before the file is closed and when the process
 * exits, so a run that fails, is cancelled or exits leaves a complete trace. With `durable` each
 * event is written and flushed to the disk before the listener returns (a journal, JOURNAL-2). The
 * listener never throws: a run is not changed by its observers, so a write that fails (ENOSPC, EIO)
 * is kept in `error`, nothing more is written, and the caller reports it (TRACE-14). Opening the
 * file throws as `openSync` does.
 */
export function jsonlFileSink(path: string, options: JsonlFileSinkOptions = {}): JsonlFileSink {
  const descriptor = openSync(path, options.append ? 'a' : 'w');
  let open = true;
  let failure: Error | undefined;
  const fail = (error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  const write = (text: string) => {
    if (!open || failure) return;
    try {
      writeAll(descriptor, text);
      if (options.durable) fdatasyncSync(descriptor);
    } catch (error) {
      fail(error);
    }
  };
  // A trace file takes a turn's events in one system call, serialised together at the turn's end
  // (events are not changed once emitted, TRACE-23); a journal takes each before the run goes on.
  const batch = options.durable ? undefined : turnBatch<TraceEvent>((events) => write(linesOf(events)), BATCH_ITEMS, one);
  if (batch) unflushed.add(batch);
  const listener = (event: TraceEvent) => {
    if (!open || failure) return;
    if (batch) batch.add(event);
    else write(traceLine(event));
  };
  return Object.defineProperties(listener, {
    close: {
      value: () => {
        if (!open) return;
        if (batch) {
          batch.flush();
          unflushed.delete(batch);
        }
        open = false;
        try {
          closeSync(descriptor);
        } catch (error) {
          fail(error);
        }
      },
    },
    error: { get: () => failure },
  }) as JsonlFileSink;
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
