/** Safe JSON parsing for untrusted text: a result union with line and column, never a bare throw. */

/**
 * How many containers (objects and arrays) may nest in a JSON value the runtime takes in (DOC-10):
 * deeper values would overflow the stack of the walks that read, render and serialise them.
 */
export const MAX_NESTING_DEPTH = 100;

/** The outcome of parsing: a value, or where and why it failed (`pointer`: where a value nests too deep). */
export type ParseResult = { ok: true; value: unknown } | { ok: false; message: string; line: number; column: number; pointer?: string };

/**
 * Parses JSON text; on failure reports the 1-based line and column of the problem. Text nesting
 * deeper than MAX_NESTING_DEPTH fails too, with the pointer of the first container too deep.
 */
export function parseJson(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const message = (error as Error).message;
    const position = positionOf(message, text);
    const { line, column } = lineAndColumn(text, position);
    return { ok: false, message: `Expected valid JSON: ${conciseMessage(message)}.`, line, column };
  }
  const deep = nestingProblem(value);
  if (deep === undefined) return { ok: true, value };
  const { line, column } = lineAndColumn(text, offsetTooDeep(text));
  return { ok: false, message: nestingMessage(deep), line, column, pointer: deep };
}

/** The sentence saying that the value at `at` (or the one a problem's pointer names) nests deeper than MAX_NESTING_DEPTH. */
export function nestingMessage(at?: string): string {
  const where = at === undefined ? 'this value' : `the value at ${at || '/'}`;
  return `Expected JSON nested at most ${MAX_NESTING_DEPTH} levels deep, but ${where} is nested deeper.`;
}

/** A container met by `nestingProblem`: how deep it sits, and under which key of which parent. */
interface NestingFrame {
  value: object;
  depth: number;
  key: string;
  parent: NestingFrame | undefined;
}

/**
 * The JSON pointer of the first container, in document order, that is nested deeper than `limit`
 * containers, or undefined when none is. The walk keeps its own stack, so any depth is safe; a
 * value that contains itself nests without end, and is reported as soon as it passes the limit.
 */
export function nestingProblem(value: unknown, limit = MAX_NESTING_DEPTH): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  // A value shared by several parents is walked again only when reached deeper than before.
  const reached = new WeakMap<object, number>();
  const stack: NestingFrame[] = [{ value, depth: 1, key: '', parent: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.depth > limit) return pointerOfFrame(frame);
    if ((reached.get(frame.value) ?? 0) >= frame.depth) continue;
    reached.set(frame.value, frame.depth);
    const entries: [string, unknown][] = Array.isArray(frame.value) ? frame.value.map((item, index) => [String(index), item]) : Object.entries(frame.value);
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, item] = entries[index]!;
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return undefined;
}

function pointerOfFrame(frame: NestingFrame): string {
  const keys: string[] = [];
  for (let at: NestingFrame | undefined = frame; at?.parent !== undefined; at = at.parent) keys.push(at.key);
  return pointer(...keys.reverse());
}

/** The offset of the first bracket of valid JSON text that opens a container deeper than MAX_NESTING_DEPTH. */
function offsetTooDeep(text: string): number {
  let depth = 0;
  let inString = false;
  for (let offset = 0; offset < text.length; offset += 1) {
    const character = text[offset];
    if (inString) {
      if (character === '\\') offset += 1;
      else if (character === '"') inString = false;
    } else if (character === '"') {
      inString = true;
    } else if (character === '[' || character === '{') {
      depth += 1;
      if (depth > MAX_NESTING_DEPTH) return offset;
    } else if (character === ']' || character === '}') {
      depth -= 1;
    }
  }
  return 0;
}

/** Drops the engine's position and its echo of the whole text from a parse error message. */
function conciseMessage(message: string): string {
  return message
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/\s*at position \d+.*$/s, '')
    .replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, '')
    .replace(/\.$/, '');
}

function positionOf(message: string, text: string): number {
  const match = /at position (\d+)/.exec(message);
  if (match) return Number(match[1]);
  const lineMatch = /line (\d+) column (\d+)/.exec(message);
  if (lineMatch) {
    const lines = text.split('\n');
    let offset = 0;
    for (let i = 0; i < Number(lineMatch[1]) - 1 && i < lines.length; i++) offset += (lines[i] ?? '').length + 1;
    return offset + Number(lineMatch[2]) - 1;
  }
  return firstBadOffset(text);
}

/**
 * Finds where a text stops being a prefix of some valid JSON, for engines whose messages give no
 * position: the shortest prefix whose parse fails for a reason other than ending too early.
 */
function firstBadOffset(text: string): number {
  const isBadPrefix = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (error) {
      const message = (error as Error).message;
      if (/end of JSON input|Unterminated/i.test(message)) return false;
      // A prefix cut short fails at its very end ("Expected ',' or '}' after property value in JSON
      // at position <length>"): more text could still make it valid.
      const position = /at position (\d+)/.exec(message);
      return !(position && Number(position[1]) >= length);
    }
  };
  let low = 1;
  let high = text.length;
  if (!isBadPrefix(high)) return text.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (isBadPrefix(middle)) high = middle;
    else low = middle + 1;
  }
  return low - 1;
}

/** Converts a 0-based offset into a 1-based line and column. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Escapes one JSON pointer segment (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** What a JSON pointer (RFC 6901, `''` for the whole value) names in `value`, if anything. */
export function atPointer(value: unknown, at: string): { found: boolean; value?: unknown } {
  if (at === '') return { found: true, value };
  if (!at.startsWith('/')) return { found: false };
  let node = value;
  for (const token of at.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return { found: false };
    node = (node as Record<string, unknown>)[key];
  }
  return { found: true, value: node };
}

/** Joins segments into a JSON pointer. */
export function pointer(...segments: (string | number)[]): string {
  return segments.map((segment) => `/${pointerSegment(segment)}`).join('');
}

/**
 * JSON text with every object's keys sorted, at every depth, and keys holding `undefined` left out
 * as JSON leaves them out: equal values give equal text whatever their key order. The identity of
 * calls (PLAN-10) and of approvals for the session (CALL-11).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
}
