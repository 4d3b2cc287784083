/** The JSONL trace file: a trace listener writing each event to disk the moment it happens (spec/trace.md TRACE-2, TRACE-14). */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { type TraceEvent, type TraceListener, traceLine } from '../protocol/trace.js';

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

/**
 * A listener writing JSONL to a file synchronously, so every event is on disk the moment it
 * happens (a SIGINT or crash still leaves a complete trace). The listener never throws: a run is
 * not changed by its observers, so a write that fails (ENOSPC, EIO) is kept in `error`, nothing
 * more is written, and the caller reports it (TRACE-14). Opening the file throws as `openSync` does.
 */
export function jsonlFileSink(path: string, options: JsonlFileSinkOptions = {}): JsonlFileSink {
  const descriptor = openSync(path, options.append ? 'a' : 'w');
  let open = true;
  let failure: Error | undefined;
  const fail = (error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  const listener = (event: TraceEvent) => {
    if (!open || failure) return;
    try {
      writeAll(descriptor, traceLine(event));
      if (options.durable) fdatasyncSync(descriptor);
    } catch (error) {
      fail(error);
    }
  };
  return Object.defineProperties(listener, {
    close: {
      value: () => {
        if (!open) return;
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
