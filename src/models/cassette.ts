/** Replay cassettes (spec/cassettes.md): their types, their schema, and loading them with clear errors. */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { documentSchema } from '../protocol/schemas.js';
import type { Usage } from '../protocol/types.js';
import { ModelConfigError, problemsFromAjv } from './config-error.js';
import { parseJson } from '../protocol/json.js';

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
  /** Addition, informational: the live model that gave the answer (written by recording). */
  model?: string;
  /** Addition, informational: a note for readers. */
  description?: string;
}

/** A replay cassette, version 1. */
export interface Cassette {
  version: 1;
  entries: CassetteEntry[];
}

/** Validates a parsed cassette; throws ModelConfigError naming `document` and each JSON pointer. */
export function validateCassette(value: unknown, document: string): Cassette {
  const validate = documentSchema('cassette.schema.json');
  if (!validate(value)) throw new ModelConfigError('replay cassette', problemsFromAjv(validate.errors, document));
  return value as Cassette;
}

/** Parses and validates cassette text read from `document`. */
export function parseCassette(text: string, document: string): Cassette {
  const parsed = parseJson(text);
  if (!parsed.ok) {
    throw new ModelConfigError('replay cassette', [{ document, pointer: '', message: parsed.message, line: parsed.line, column: parsed.column }]);
  }
  return validateCassette(parsed.value, document);
}

/** Reads a cassette file; a missing, unparseable or invalid file is a ModelConfigError. */
export async function readCassetteFile(path: string): Promise<Cassette> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw unreadable(path, error);
  }
  return parseCassette(text, path);
}

/** Synchronous `readCassetteFile`, for factories that must build a model at once. */
export function readCassetteFileSync(path: string): Cassette {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw unreadable(path, error);
  }
  return parseCassette(text, path);
}

function unreadable(path: string, error: unknown): ModelConfigError {
  const reason = error instanceof Error ? error.message : String(error);
  return new ModelConfigError('replay cassette', [{ document: path, pointer: '', message: `The file cannot be read: ${reason}` }]);
}
