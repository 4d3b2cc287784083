/** Reading a trace file back (spec/trace.md): every line JSON, every line an event, the fields reports read of the right type. */
import { createReadStream } from 'node:fs';
import { ProtocolError, UsageError } from '../../protocol/errors.js';
import { parseJson } from '../../protocol/json.js';
import type { TraceEventBase } from '../../protocol/trace/events.js';
import { isJsonObject } from '../../protocol/types.js';

/** What a field must be, said in the words of an error message. */
type Expectation = 'a string' | 'a string or null' | 'a whole number of at least 0' | 'a number of at least 0' | 'a number of at least 0 or null' | 'an object';

const CHECKS: Record<Expectation, (value: unknown) => boolean> = {
  'a string': (value) => typeof value === 'string',
  'a string or null': (value) => value === null || typeof value === 'string',
  'a whole number of at least 0': (value) => Number.isSafeInteger(value) && (value as number) >= 0,
  'a number of at least 0': (value) => typeof value === 'number' && Number.isFinite(value) && value >= 0,
  'a number of at least 0 or null': (value) => value === null || (typeof value === 'number' && Number.isFinite(value) && value >= 0),
  'an object': isJsonObject,
};

/** A field of an event: its dotted path, what it must be, and whether it may be absent. */
type FieldRule = [path: string, expected: Expectation, optional?: 'optional'];

/** The common fields (TRACE-1). */
const COMMON: FieldRule[] = [
  ['event', 'a string'],
  ['run', 'a string'],
  ['parent', 'a string or null'],
  ['depth', 'a whole number of at least 0'],
];

/** The fields the cost report reads, per event (TRACE-3, TRACE-5, TRACE-7); other events need only the common fields. */
const EVENT_FIELDS: Record<string, FieldRule[]> = {
  'run.started': [
    ['request', 'a string'],
    ['name', 'a string', 'optional'],
    ['model', 'a string or null'],
  ],
  'delegate.started': [
    ['child', 'a string'],
    ['name', 'a string', 'optional'],
    ['model', 'a string or null', 'optional'],
    ['tier', 'a string or null', 'optional'],
  ],
  'model.response': [
    ['step', 'a whole number of at least 0'],
    ['model', 'a string'],
    ['replayOf', 'a string', 'optional'],
    ['usage', 'an object'],
    ['usage.inputTokens', 'a number of at least 0'],
    ['usage.outputTokens', 'a number of at least 0'],
    ['usage.cacheReadTokens', 'a number of at least 0', 'optional'],
    ['usage.cacheWriteTokens', 'a number of at least 0', 'optional'],
    ['costUsd', 'a number of at least 0 or null'],
  ],
  'run.failed': [['code', 'a string']],
  'delegate.failed': [
    ['child', 'a string or null'],
    ['code', 'a string'],
  ],
};

function field(event: Record<string, unknown>, path: string): { found: boolean; value?: unknown } {
  let node: unknown = event;
  for (const key of path.split('.')) {
    if (!isJsonObject(node) || !Object.hasOwn(node, key)) return { found: false };
    node = node[key];
  }
  return { found: true, value: node };
}

/** Why a parsed line is not a trace event the reports can read, or undefined when it is. */
export function traceEventProblem(value: unknown): string | undefined {
  if (!isJsonObject(value))
    return `expected a trace event (an object with "event", "run", "parent" and "depth", TRACE-1), got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`;
  const event = value as Record<string, unknown>;
  const rules = [...COMMON, ...(typeof event.event === 'string' ? (EVENT_FIELDS[event.event] ?? []) : [])];
  for (const [path, expected, optional] of rules) {
    const { found, value: at } = field(event, path);
    if (!found && optional) continue;
    if (!found || !CHECKS[expected](at)) {
      const what = typeof event.event === 'string' && !COMMON.some(([name]) => name === path) ? `a ${event.event} event` : 'a trace event';
      const got = found ? JSON.stringify(at).slice(0, 60) : 'nothing';
      return `${what} needs "${path}" to be ${expected}, got ${got}`;
    }
  }
  return undefined;
}

/** The JSON value of one line; `where` is `file:line`. */
function lineValue(line: string, where: string): unknown {
  const parsed = parseJson(line);
  if (parsed.ok) return parsed.value;
  // Valid JSON nested deeper than documents may be (an Activity's own event): the report reads only its shallow fields.
  if (parsed.pointer !== undefined) return JSON.parse(line) as unknown;
  throw new UsageError(`${where}:${parsed.column}: this line is not JSON, so the file is not a trace (one JSON event per line): ${parsed.message}`);
}

/** The trace event of one non-blank line; `where` is `file:line`. */
function lineEvent(line: string, where: string): TraceEventBase {
  const value = lineValue(line, where);
  const problem = traceEventProblem(value);
  if (problem !== undefined) throw new UsageError(`${where}: this line is not a trace event: ${problem}.`);
  return value as TraceEventBase;
}

/** A line of a trace that is not a trace event, as a tolerant reader reports it. */
export interface BadTraceLine {
  /** 1-based. */
  line: number;
  /** Why, in the words of the UsageError a strict reader throws (with the file and the line). */
  message: string;
}

/** How {@link readTraceFile} reads. */
export interface ReadTraceOptions {
  /** Tolerant reading: a bad line is handed here and skipped instead of ending the read (a run killed mid-write). */
  onBadLine?(bad: BadTraceLine): void;
}

/**
 * Reads a JSONL trace file, event by event as it streams in, so a trace of any size is read in
 * time linear in its length and never held whole. Blank lines are skipped. A file that cannot be
 * read, a line that is not JSON, or a line that is not a trace event is a UsageError naming the
 * file and the line, unless `options.onBadLine` takes the bad lines. Stopping the iteration early
 * closes the file.
 */
export async function* readTraceFile(path: string, options: ReadTraceOptions = {}): AsyncGenerator<TraceEventBase> {
  const read = (line: string, number: number): TraceEventBase | undefined => {
    if (options.onBadLine === undefined) return lineEvent(line, `${path}:${number}`);
    try {
      return lineEvent(line, `${path}:${number}`);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      options.onBadLine({ line: number, message: error.message });
      return undefined;
    }
  };
  // A line longer than a chunk is gathered in parts and joined once, never re-scanned.
  let parts: string[] = [];
  let number = 0;
  try {
    for await (const chunk of createReadStream(path, { encoding: 'utf8' }) as AsyncIterable<string>) {
      let start = 0;
      for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n', start)) {
        parts.push(chunk.slice(start, end));
        const line = parts.join('');
        parts = [];
        start = end + 1;
        number += 1;
        const event = line.trim() === '' ? undefined : read(line, number);
        if (event !== undefined) yield event;
      }
      parts.push(chunk.slice(start));
    }
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new UsageError(`Cannot read the trace ${path}: ${(error as Error).message}`);
  }
  const last = parts.join('');
  const event = last.trim() === '' ? undefined : read(last, number + 1);
  if (event !== undefined) yield event;
}
