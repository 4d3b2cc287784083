/**
 * CLI-15: the files `delegate-run` writes (`--trace`, `--record`, `--journal`) never replace a file
 * the run reads. Checked before any is opened.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { parseJson } from '../protocol/json.js';
import { resolve } from 'node:path';
import { UsageError } from '../protocol/errors.js';

/** A file the run reads (absolute), and what it is to the run, for the messages. */
export interface RunInput {
  path: string;
  what: string;
}

/** True when both paths name one existing file (through symbolic or hard links), or are the same path. */
function sameFile(first: string, second: string): boolean {
  const a = statSync(first, { throwIfNoEntry: false });
  const b = statSync(second, { throwIfNoEntry: false });
  if (a && b) return a.dev === b.dev && a.ino === b.ino;
  return resolve(first) === resolve(second);
}

/** Files larger than this are not read whole to tell whether they are one JSON document. */
const LARGEST_JSON_INPUT = 64 * 1024 * 1024;

/**
 * The value of a regular file that holds exactly one JSON document, the form of every JSON file a
 * run reads (a Request, a delegate, a cassette, an input, a models file); undefined for anything
 * else. An earlier trace is JSON Lines: its first line is a whole value with more after it, which
 * a single document never has, so only that line is read.
 */
function jsonDocumentIn(path: string): { value: unknown } | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats?.isFile() || stats.size === 0) return undefined;
    const head = Buffer.alloc(Math.min(stats.size, 1024 * 1024));
    const descriptor = openSync(path, 'r');
    let length: number;
    try {
      length = readSync(descriptor, head, 0, head.length, 0);
    } finally {
      closeSync(descriptor);
    }
    const text = head.toString('utf8', 0, length);
    const newline = text.indexOf('\n');
    if (newline >= 0 && text.slice(newline + 1).trim() !== '' && parseJson(text.slice(0, newline)).ok) return undefined;
    if (stats.size > LARGEST_JSON_INPUT) return undefined;
    const parsed = parseJson(readFileSync(path, 'utf8'));
    return parsed.ok ? { value: parsed.value } : undefined;
  } catch {
    return undefined;
  }
}

/** A file the command writes: its option, the path as given, and made absolute. */
export interface OutputPath {
  flag: '--trace' | '--record' | '--journal';
  given: string;
  path: string;
}

/**
 * CLI-15: refuses a --trace or --record path that would replace an input of the run, before
 * either is written. Named inputs are compared as files (symbolic and hard links followed). Files
 * read later in the run (delegates, a child's cassette, a models file) are all single JSON
 * documents, so a trace path holding one is refused too, and a --record path holding one that is
 * not a cassette; an earlier trace (JSON Lines) or cassette may be replaced.
 */
export function checkOutputPaths(outputs: OutputPath[], inputs: RunInput[]): void {
  for (const output of outputs) {
    const input = inputs.find((candidate) => sameFile(output.path, candidate.path));
    if (input)
      throw new UsageError(`${output.flag} ${output.given} is ${input.what} (${input.path}); the run reads it, so it cannot be written. Choose another file.`);
    const document = jsonDocumentIn(output.path);
    if (!document) continue;
    if (output.flag !== '--record') {
      throw new UsageError(
        `${output.flag} ${output.given}: ${output.path} holds a JSON document, which the run may read (a delegate, a cassette, an input); a ${output.flag === '--trace' ? 'trace' : 'journal'} would replace it. Choose another file, e.g. one ending in .jsonl.`,
      );
    }
    if (!isCassette(document.value)) {
      throw new UsageError(
        `--record ${output.given}: ${output.path} holds a JSON document that is not a cassette (a Request, say); recording would replace it. Choose another file.`,
      );
    }
  }
  for (const [index, first] of outputs.entries()) {
    const second = outputs.slice(index + 1).find((other) => sameFile(first.path, other.path));
    if (second) throw new UsageError(`${first.flag} and ${second.flag} name the same file, ${first.path}; give each its own.`);
  }
}

function isCassette(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Array.isArray((value as { entries?: unknown }).entries);
}
