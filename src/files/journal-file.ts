/** The journal file (spec/journal.md JOURNAL-1, JOURNAL-2, JOURNAL-7, JOURNAL-11): the trace's JSONL, flushed to disk in groups before the effects its events record, read back to resume, locked while written. */
import { existsSync, readFileSync, truncateSync } from 'node:fs';
import { UsageError } from '../protocol/errors.js';
import type { JournalOpener, JournalStore } from '../protocol/trace/journal.js';
import { parseJson } from '../protocol/json.js';
import type { TraceEvent } from '../protocol/trace/trace.js';
import { type JournalLock, lockJournal } from './journal-lock.js';
import { jsonlFileSink } from './jsonl-file-sink.js';

/** How many characters of an ignored partial line the journal names. */
const NAMED_CHARACTERS = 80;

/** What a journal file holds: its events, and the partial last line that was ignored, named. */
export interface JournalReading {
  events: TraceEvent[];
  ignored: string | undefined;
  /** The length in bytes of the complete lines: where appending goes on. */
  completeBytes: number;
}

/**
 * Reads a journal's text. A last line without its newline is what a kill left half-written: it is ignored and named (JOURNAL-7). Any other line that is not a JSON
 * event means the file is not a journal, and is a UsageError naming the file and the line.
 */
export function readJournalText(text: string, path: string): JournalReading {
  const events: TraceEvent[] = [];
  const lines = text.split('\n');
  // The text after the last newline (empty when the file ends with one).
  const tail = lines.pop() as string;
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    events.push(eventOf(line, path, index + 1));
  }
  const completeBytes = Buffer.byteLength(text, 'utf8') - Buffer.byteLength(tail, 'utf8');
  if (tail === '') return { events, ignored: undefined, completeBytes };
  // Even a tail that parses was cut before its newline: the event in flight, which JOURNAL-2 lets a kill lose.
  const excerpt = tail.length > NAMED_CHARACTERS ? `${tail.slice(0, NAMED_CHARACTERS)}…` : tail;
  return { events, ignored: `line ${lines.length + 1} (${Buffer.byteLength(tail, 'utf8')} bytes, cut off): ${excerpt}`, completeBytes };
}

function eventOf(line: string, path: string, number: number): TraceEvent {
  const parsed = parseJson(line);
  if (!parsed.ok)
    throw new UsageError(
      `${path}:${number}:${parsed.column}: the journal's line ${number} is not JSON (${parsed.message}); only its last line may be cut off.`,
      { journal: path, line: number },
    );
  if (!isEvent(parsed.value))
    throw new UsageError(`${path}:${number}: the journal's line ${number} is not a trace event: expected an object with "event" and "run" strings.`, {
      journal: path,
      line: number,
    });
  return parsed.value;
}

function isEvent(value: unknown): value is TraceEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as TraceEvent).event === 'string' &&
    typeof (value as TraceEvent).run === 'string'
  );
}

/**
 * Opens a journal file, locked until the store is closed (JOURNAL-11): a journal another live
 * process writes is a UsageError naming that process. `create` replaces it; `resume` reads it, cuts
 * off a partial last line (it is named in `ignored`, so nothing is lost silently) and appends after
 * it. A file that cannot be read or opened is a UsageError naming it.
 */
export const openJournalFile: JournalOpener = (path, mode) => {
  if (mode === 'resume' && !existsSync(path)) throw new UsageError(`Cannot resume from ${path}: there is no such file.`, { journal: path });
  // Locked before it is read or replaced: a second writer must neither cut its tail nor run its calls again.
  let lock: JournalLock;
  try {
    lock = lockJournal(path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot open the journal ${path} for writing: ${(error as Error).message}.`, { journal: path });
  }
  try {
    return openLocked(path, mode, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
};

/** Opens a journal whose lock is held; closing the store releases it. */
function openLocked(path: string, mode: 'create' | 'resume', lock: JournalLock): JournalStore {
  let reading: JournalReading = { events: [], ignored: undefined, completeBytes: 0 };
  if (mode === 'resume') {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read the journal ${path}: ${(error as Error).message}.`, { journal: path });
    }
    reading = readJournalText(text, path);
  }
  let sink: ReturnType<typeof jsonlFileSink>;
  try {
    if (reading.ignored !== undefined) truncateSync(path, reading.completeBytes);
    sink = jsonlFileSink(path, { append: mode === 'resume', durable: true });
  } catch (error) {
    throw new UsageError(`Cannot open the journal ${path} for writing: ${(error as Error).message}.`, { journal: path });
  }
  const store: JournalStore = {
    location: path,
    events: reading.events,
    ...(reading.ignored === undefined ? {} : { ignored: reading.ignored }),
    append: (event) => sink(event),
    whenDurable: () => sink.whenDurable(),
    close: () => {
      // The lock goes even when the last write fails: a journal no one writes is free (JOURNAL-11).
      try {
        sink.close();
      } finally {
        lock.release();
      }
    },
    get error() {
      return sink.error;
    },
  };
  return store;
}
