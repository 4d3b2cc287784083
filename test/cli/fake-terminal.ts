/** Test doubles for the progress views: a stream that records what is written, optionally posing as a terminal. */
import { Writable } from 'node:stream';

/** A Writable collecting every chunk written to it, with the terminal properties the CLI reads. */
export interface FakeStream extends Writable {
  chunks: string[];
  isTTY?: boolean;
  columns?: number;
  rows?: number;
  /** Everything written, joined. */
  text(): string;
}

/** A stream that is not a terminal (a pipe or a file). */
export function fakePipe(): FakeStream {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  }) as FakeStream;
  stream.chunks = chunks;
  stream.text = () => chunks.join('');
  return stream;
}

/** A stream posing as a terminal: `isTTY = true` and `columns` (default 100). */
export function fakeTerminal(columns = 100, rows?: number): FakeStream {
  const stream = fakePipe();
  stream.isTTY = true;
  stream.columns = columns;
  if (rows !== undefined) stream.rows = rows;
  return stream;
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Removes ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** True when the text holds any ANSI escape sequence. */
export function hasAnsi(text: string): boolean {
  return /\u001b\[/.test(text);
}

/** The visible lines of one frame the live writer drew (a chunk), without escapes or the trailing empty line. */
export function frameLines(chunk: string): string[] {
  return stripAnsi(chunk.replace(/^\r/, ''))
    .split('\n')
    .filter((line) => line !== '');
}
