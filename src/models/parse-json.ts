/** Parsing a model's answer text as JSON: the project's safe parser, finding the JSON object in a fenced block or in prose. */
import { parseJson, type ParseResult } from '../protocol/json.js';
import { isJsonObject } from '../protocol/types.js';

/** How many opening braces `parseModelJson` tries as the start of an object wrapped in prose. */
const MAX_EMBEDDED_CANDIDATES = 32;

/**
 * Parses model text as JSON (spec/models.md MODEL-6). Text that is not JSON as a whole may wrap
 * it: the first Markdown code fence whose content is JSON is taken, else the first balanced
 * `{…}` in the text that parses as an object (some models add prose around the answer when no
 * response format forces JSON). Nothing is repaired; the failure reported is the whole text's.
 */
export function parseModelJson(text: string): ParseResult {
  const whole = parseJson(text);
  if (whole.ok) return whole;
  for (const fence of text.matchAll(/```[\w-]*[^\S\n]*\n([\s\S]*?)```/g)) {
    const inner = parseJson(fence[1] ?? '');
    if (inner.ok) return inner;
  }
  return embeddedObject(text) ?? whole;
}

/**
 * The Solution an answer's text holds, or undefined when it is not JSON: a plain-text answer
 * (MSG-28, MODEL-11) is the output itself; anything else is parsed as JSON (MODEL-6) and mapped
 * back from the provider's strict form by `decode`; an answer asked for as the output object
 * (MSG-32, `asOutput`) is then the Solution's `output`.
 */
export function solutionOfAnswer(text: string, plainText: boolean | undefined, decode?: (value: unknown) => unknown, asOutput?: boolean): unknown {
  if (plainText) return { output: text };
  const parsed = parseModelJson(text);
  if (!parsed.ok) return undefined;
  const value = decode ? decode(parsed.value) : parsed.value;
  return asOutput ? { output: value } : value;
}

/** The first balanced `{…}` of `text` that parses as a JSON object. */
function embeddedObject(text: string): ParseResult | undefined {
  let start = text.indexOf('{');
  for (let tried = 0; start >= 0 && tried < MAX_EMBEDDED_CANDIDATES; tried += 1) {
    const end = closingBrace(text, start);
    if (end < 0) return undefined;
    const parsed = parseJson(text.slice(start, end + 1));
    if (parsed.ok && isJsonObject(parsed.value)) return parsed;
    start = text.indexOf('{', start + 1);
  }
  return undefined;
}

/** The index of the brace closing the one at `start`, skipping strings; -1 when it never closes. */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{') {
      depth += 1;
    } else if (char === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}
