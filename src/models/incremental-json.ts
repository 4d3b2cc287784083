/** A small streaming JSON scanner that yields each element of a Solution's top-level `calls` array as soon as it is complete. */
import { parseJson } from '../protocol/json.js';

/** One element of the top-level `calls` array, complete and parsed. */
export interface CompletedCall {
  /** Its 0-based position in `calls`. */
  index: number;
  /** The parsed element (a call object when the model behaves). */
  value: unknown;
  /** Where the element ends in all the text pushed so far (UTF-16 offset just past its last character). */
  end: number;
}

/**
 * Scans JSON text chunk by chunk. It skips anything before the first `{` (a code fence, a
 * preamble), follows the top-level object's keys, and inside the first top-level `calls` array
 * returns each element the moment its last character arrives. It never validates: the final
 * text is still parsed and validated whole by the caller.
 */
export class CallsStreamParser {
  private depth = 0;
  private started = false;
  private finished = false;
  private inString = false;
  private escaped = false;
  /** At depth 1, the next string is a key. */
  private expectKey = false;
  /** The raw text of a top-level key being read, or null. */
  private keyText: string | null = null;
  private lastKey: string | undefined;
  private inCalls = false;
  private callsSeen = false;
  /** The text of the element being read, or null between elements. */
  private element: string | null = null;
  private elementKind: 'container' | 'string' | 'scalar' = 'scalar';
  private nextIndex = 0;
  /** UTF-16 offset of the character being read, in all the text pushed so far. */
  private offset = 0;
  private start = -1;

  /** Where the top-level object starts in the text pushed so far (-1 before its `{`). */
  get objectStart(): number {
    return this.start;
  }

  /** How many elements of `calls` have been completed so far (parsable or not). */
  get completed(): number {
    return this.nextIndex;
  }

  /** Feeds the next chunk; returns the elements it completed, in order. */
  push(chunk: string): CompletedCall[] {
    const out: CompletedCall[] = [];
    for (const char of chunk) {
      if (this.finished) break;
      this.step(char, out);
      this.offset += char.length;
    }
    return out;
  }

  private step(char: string, out: CompletedCall[]): void {
    if (!this.started) {
      if (char === '{') {
        this.started = true;
        this.start = this.offset;
        this.depth = 1;
        this.expectKey = true;
      }
      return;
    }
    if (this.inString) {
      if (this.element !== null) this.element += char;
      if (this.escaped) {
        this.escaped = false;
      } else if (char === '\\') {
        this.escaped = true;
      } else if (char === '"') {
        this.inString = false;
        if (this.keyText !== null) {
          this.lastKey = decodeKey(this.keyText);
          this.keyText = null;
          this.expectKey = false;
        } else if (this.element !== null && this.elementKind === 'string' && this.depth === 2) {
          this.complete(out, this.offset + char.length);
        }
        return;
      }
      if (this.keyText !== null) this.keyText += char;
      return;
    }
    if (this.element !== null && this.elementKind === 'scalar' && (char === ',' || char === ']' || isWhitespace(char))) {
      this.complete(out, this.offset);
    }
    switch (char) {
      case '"':
        this.inString = true;
        if (this.depth === 1 && this.expectKey) this.keyText = '';
        else this.extendOrStart(char, 'string');
        return;
      case '{':
      case '[':
        this.extendOrStart(char, 'container');
        if (this.depth === 1 && char === '[' && this.lastKey === 'calls' && !this.callsSeen) {
          this.inCalls = true;
          this.callsSeen = true;
        }
        this.depth += 1;
        return;
      case '}':
      case ']':
        if (this.element !== null) this.element += char;
        this.depth -= 1;
        if (this.element !== null && this.elementKind === 'container' && this.depth === 2) this.complete(out, this.offset + char.length);
        else if (this.inCalls && this.depth === 1) this.inCalls = false;
        if (this.depth === 0) this.finished = true;
        return;
      case ',':
        if (this.depth === 1) {
          this.expectKey = true;
          this.lastKey = undefined;
        } else if (this.element !== null) {
          this.element += char;
        }
        return;
      default:
        if (isWhitespace(char)) {
          if (this.element !== null) this.element += char;
        } else {
          this.extendOrStart(char, 'scalar');
        }
    }
  }

  /** Appends to the element in progress, or starts one when this character begins an element of `calls`. */
  private extendOrStart(char: string, kind: 'container' | 'string' | 'scalar'): void {
    if (this.element !== null) {
      this.element += char;
    } else if (this.inCalls && this.depth === 2) {
      this.element = char;
      this.elementKind = kind;
    }
  }

  private complete(out: CompletedCall[], end: number): void {
    const text = this.element ?? '';
    this.element = null;
    const index = this.nextIndex;
    this.nextIndex += 1;
    const parsed = parseJson(text);
    // A malformed element is skipped: the final parse of the whole text reports it.
    if (parsed.ok) out.push({ index, value: parsed.value, end });
  }
}

function isWhitespace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\r' || char === '\t';
}

function decodeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
