/** Replay cassettes (spec/cassettes.md): their types, their schema, and loading them with clear errors. */
import type { Usage } from '../protocol/usage.js';
import { ModelConfigError } from './config-error.js';
import { readDocumentFile, readDocumentFileSync } from '../files/read-document-file.js';
import { checkDocument, type DocumentReading, readDocument } from '../protocol/read-document.js';

/** Which model calls an entry answers; every field given must match, absent fields match anything. */
export interface CassetteMatch {
  /** The run's request name (`ModelRequest.requestName`). */
  request?: string;
  /** The 0-based loop step within that run. */
  step?: number;
  /** A substring of the rendered prompt (all message contents joined with "\n"). */
  contains?: string;
}

/** One recorded or scripted model answer. Exactly one of `solution` and `text` is given. */
export interface CassetteEntry {
  match?: CassetteMatch;
  /** The answer as an object; the response text is its JSON. */
  solution?: Record<string, unknown>;
  /** The answer as raw text (to script invalid answers); parsed when it is JSON. */
  text?: string;
  /** Token usage reported for the answer; absent fields count as 0. */
  usage?: Partial<Usage>;
  /** Reusable: not consumed when used. */
  repeat?: boolean;
  /** Addition: wait this long (cancellable) before answering, to script slow models in tests. */
  delayMs?: number;
  /** Addition: the live model the answer stands for (written by recording); the answer is priced as that model (CAS-14). */
  model?: string;
  /** Addition, informational: a note for readers. */
  description?: string;
  /**
   * Addition: the provider cut this answer at its length limit (OpenAI `finish_reason: length`,
   * Anthropic `stop_reason: max_tokens`): the call fails with `max_tokens_exceeded`, `text` (or
   * `solution`) being the part that arrived (CAS-13).
   */
  cut?: boolean;
}

/** A replay cassette, version 1. */
export interface Cassette {
  version: 1;
  entries: CassetteEntry[];
}

const CASSETTE_SCHEMA = 'cassette.schema.json';

/** Validates a parsed cassette; throws ModelConfigError naming `document` and each JSON pointer. */
export function validateCassette(value: unknown, document: string): Cassette {
  return cassetteOf(checkDocument<Cassette>(value, document, CASSETTE_SCHEMA));
}

/** The cassette of a reading, or a ModelConfigError with every problem. */
function cassetteOf(reading: DocumentReading<Cassette>): Cassette {
  if (!reading.ok) throw new ModelConfigError('replay cassette', reading.problems);
  return reading.value;
}

/** Parses and validates cassette text read from `document`. */
export function parseCassette(text: string, document: string): Cassette {
  return cassetteOf(readDocument<Cassette>(text, document, CASSETTE_SCHEMA));
}

/** Reads a cassette file; a missing, unparseable or invalid file is a ModelConfigError. */
export async function readCassetteFile(path: string): Promise<Cassette> {
  return cassetteOf(await readDocumentFile<Cassette>(path, CASSETTE_SCHEMA));
}

/** Synchronous `readCassetteFile`, for factories that must build a model at once. */
export function readCassetteFileSync(path: string): Cassette {
  return cassetteOf(readDocumentFileSync<Cassette>(path, CASSETTE_SCHEMA));
}
