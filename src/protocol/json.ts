/** Safe JSON parsing for untrusted text: a result union with line and column, never a bare throw. */

/** The outcome of parsing: a value, or where and why it failed. */
export type ParseResult = { ok: true; value: unknown } | { ok: false; message: string; line: number; column: number };

/** Parses JSON text; on failure reports the 1-based line and column of the problem. */
export function parseJson(text: string): ParseResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = (error as Error).message;
    const position = positionOf(message, text);
    const { line, column } = lineAndColumn(text, position);
    return { ok: false, message: `Expected valid JSON: ${conciseMessage(message)}.`, line, column };
  }
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
