/** The grammar of variables (spec/variables.md): `†` references, paths, input expressions and output paths, parsed and written. */
import { createRequire } from 'node:module';
import { MAX_NESTING_DEPTH } from '../json.js';
import { isJsonObject } from '../types.js';

// jsonpath-plus (its CommonJS build) is loaded with the first path split, not by every start (CLI-34).
const require = createRequire(import.meta.url);
let jsonPath: typeof import('jsonpath-plus')['JSONPath'] | undefined;

/** One step of a path: an object key (string) or an array index (number). */
export type PathSegment = string | number;

/** A parsed `†<kind>.<path>` (or whole-kind `†<kind>`) variable reference. */
export interface Reference {
  /** The kind of data it reads or writes (`input`, `state`, `output`, any data `kind`). */
  kind: string;
  /** The path below the kind as written (`items[0].id`, `["x y"]`); '' for the whole kind. */
  path: string;
  /** The path as segments: string keys and number indices. */
  segments: PathSegment[];
  /** The reference exactly as it appeared, `†` included. */
  text: string;
}

/** A string that is entirely references: one, or several joined by a single operator. */
export type Expression = { op: 'ref'; refs: [Reference] } | { op: 'or'; refs: Reference[] } | { op: 'and'; refs: Reference[] };

/** A parsed `_outputPath`: `or` = alternative outcomes (one is picked), `and` = fan-out to all. */
export interface OutputPath {
  op: 'ref' | 'or' | 'and';
  targets: Reference[];
}

/** The reference sigil. */
export const REFERENCE_SIGIL = '†';

// The grammar of a reference. The syntax has no escapes, so quoted keys exclude their own quote and
// brackets, double-quoted keys also `'`, and all exclude `^` and `;` (jsonpath-plus's tokenizer gives
// those a meaning); whatever jsonpath-plus still splits differently is rejected in `segmentsOf`.
const KIND = '[A-Za-z_][A-Za-z0-9_-]*';
const DOT_SEGMENT = '\\.[\\p{L}\\p{N}_-]+';
const INDEX_SEGMENT = '\\[(?:0|[1-9][0-9]*)\\]';
const QUOTED_SEGMENT = `\\[(?:"[^"'\\[\\]^;]*"|'[^'\\[\\]^;]*')\\]`;
const SEGMENT = `(?:${DOT_SEGMENT}|${INDEX_SEGMENT}|${QUOTED_SEGMENT})`;
const REFERENCE_SOURCE = `${REFERENCE_SIGIL}(${KIND})(${SEGMENT}*)`;
const WHOLE_REFERENCE = new RegExp(`^${REFERENCE_SOURCE}$`, 'u');
const KIND_PATTERN = new RegExp(`^${KIND}$`, 'u');
const PLAIN_KEY = /^[\p{L}\p{N}_-]+$/u;
const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;
const OPERATOR = /\|\||&&/;

/** A fresh global regex finding every reference embedded in a string. */
function referencePattern(): RegExp {
  return new RegExp(REFERENCE_SOURCE, 'gu');
}

/**
 * Turns the text after the kind (`.a[0]["x y"]`, or '') into segments. jsonpath-plus splits the
 * path; our own tokens say which parts were indices, and any disagreement rejects the path. A
 * path of more than MAX_NESTING_DEPTH segments is none (DOC-10), and is refused before
 * jsonpath-plus, whose time grows faster than the path, sees it.
 */
function segmentsOf(suffix: string): PathSegment[] | undefined {
  const tokens: { text: string; index: boolean }[] = [];
  const token = new RegExp(SEGMENT, 'uy');
  let position = 0;
  while (position < suffix.length) {
    token.lastIndex = position;
    const match = token.exec(suffix);
    if (!match || tokens.length === MAX_NESTING_DEPTH) return undefined;
    const text = match[0];
    if (text.startsWith('.')) {
      const key = text.slice(1);
      tokens.push({ text: key, index: CANONICAL_INDEX.test(key) });
    } else if (text.startsWith('["') || text.startsWith("['")) {
      tokens.push({ text: text.slice(2, -2), index: false });
    } else {
      tokens.push({ text: text.slice(1, -1), index: true });
    }
    position = token.lastIndex;
  }
  if (tokens.length === 0) return [];
  jsonPath ??= (require('jsonpath-plus') as typeof import('jsonpath-plus')).JSONPath;
  const parts = jsonPath.toPathArray(`$${suffix}`).slice(1);
  if (parts.length !== tokens.length || parts.some((part, i) => part !== tokens[i]!.text)) return undefined;
  return parts.map((part, i) => (tokens[i]!.index ? Number(part) : part));
}

/** The `path` of a reference: the suffix without its leading dot. */
function pathTextOf(suffix: string): string {
  return suffix.startsWith('.') ? suffix.slice(1) : suffix;
}

function referenceOf(text: string, kind: string, suffix: string): Reference | undefined {
  const segments = segmentsOf(suffix);
  if (!segments) return undefined;
  if (segments.some((segment) => typeof segment === 'number' && !Number.isSafeInteger(segment))) return undefined;
  return { kind, path: pathTextOf(suffix), segments, text };
}

/** Parses a string that is exactly one reference (`†input.userName`, `†state.items[0].id`, `†output`). */
export function parseReference(text: string): Reference | undefined {
  const match = WHOLE_REFERENCE.exec(text);
  if (!match) return undefined;
  return referenceOf(text, match[1]!, match[2]!);
}

/** The array index a segment addresses, if it is one (a number or a canonical digit string). */
export function arrayIndexOf(segment: PathSegment): number | undefined {
  if (typeof segment === 'number') return segment;
  return CANONICAL_INDEX.test(segment) ? Number(segment) : undefined;
}

/** Parses a path below a kind as written in `_path` (`items[0].name`, `["x y"]`; '' = the root). */
export function parsePath(path: string): readonly PathSegment[] | undefined {
  // Every result a fan-out writes to one path is recorded at it: parsed once, the segments frozen since they are shared.
  return remembered(parsedPaths, path, () => {
    if (path === '') return Object.freeze([]);
    const segments = parseReference(`${REFERENCE_SIGIL}_${path.startsWith('[') ? path : `.${path}`}`)?.segments;
    return segments && Object.freeze(segments);
  });
}

/** How many distinct texts each memo of parses keeps; past that it starts again empty. */
const REMEMBERED_PARSES = 1024;

/** The value `parse` gives for `text`, computed once while `memo` keeps it (`undefined`, for text that does not parse, included). */
function remembered<T>(memo: Map<string, T | undefined>, text: string, parse: () => T | undefined): T | undefined {
  const known = memo.get(text);
  if (known !== undefined || memo.has(text)) return known;
  const value = parse();
  if (memo.size >= REMEMBERED_PARSES) memo.clear();
  memo.set(text, value);
  return value;
}

const parsedPaths = new Map<string, readonly PathSegment[] | undefined>();

/**
 * Writes segments as a path (`items[0].name`), the inverse of `parsePath`. Keys that are plain words
 * use dots, numbers use brackets, other keys are quoted. Throws a RangeError for a key the syntax
 * cannot express (one holding `'`, a bracket, `^` or `;`: there are no escapes).
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') {
      if (!Number.isSafeInteger(segment) || segment < 0)
        throw new RangeError(`The path segment ${segment} is not an array index; indices are whole numbers from 0.`);
      path += `[${segment}]`;
    } else if (PLAIN_KEY.test(segment) && !CANONICAL_INDEX.test(segment)) {
      path += path === '' ? segment : `.${segment}`;
    } else {
      const quote = segment.includes('"') ? "'" : '"';
      const candidate = `[${quote}${segment}${quote}]`;
      if (segmentsOf(candidate)?.[0] !== segment) {
        throw new RangeError(`The key ${JSON.stringify(segment)} cannot be written in a path; quoted keys may not contain "'", "[", "]", "^" or ";".`);
      }
      path += candidate;
    }
  }
  return path;
}

/** Writes a reference (`†state.items[0].id`) from a kind and segments; the inverse of `parseReference`. */
export function formatReference(kind: string, segments: readonly PathSegment[] = []): string {
  if (!KIND_PATTERN.test(kind)) throw new RangeError(`The kind ${JSON.stringify(kind)} is not an identifier; kinds match [A-Za-z_][A-Za-z0-9_-]*.`);
  const path = formatPath(segments);
  if (path === '') return `${REFERENCE_SIGIL}${kind}`;
  return `${REFERENCE_SIGIL}${kind}${path.startsWith('[') ? path : `.${path}`}`;
}

/** A reference built from a kind and segments, with canonical `path` and `text`. */
export function makeReference(kind: string, segments: readonly PathSegment[] = []): Reference {
  return { kind, path: formatPath(segments), segments: [...segments], text: formatReference(kind, segments) };
}

/** The parts of a string read as an expression: its references, operators and unusable sides. */
interface ExpressionScan {
  refs: Reference[];
  operators: ('||' | '&&')[];
  badSides: string[];
}

function scanExpression(text: string): ExpressionScan {
  const scan: ExpressionScan = { refs: [], operators: [], badSides: [] };
  const reference = new RegExp(REFERENCE_SOURCE, 'uy');
  const skipSpace = (from: number): number => {
    let position = from;
    while (position < text.length && /\s/u.test(text[position]!)) position += 1;
    return position;
  };
  const operatorAt = (position: number): '||' | '&&' | undefined => {
    const pair = text.slice(position, position + 2);
    return pair === '||' || pair === '&&' ? pair : undefined;
  };
  let position = skipSpace(0);
  for (;;) {
    reference.lastIndex = position;
    const match = reference.exec(text);
    const after = match ? skipSpace(reference.lastIndex) : position;
    const parsed = match ? referenceOf(match[0], match[1]!, match[2]!) : undefined;
    if (parsed && (after === text.length || operatorAt(after))) {
      scan.refs.push(parsed);
      position = after;
    } else {
      const next = text.slice(position).search(OPERATOR);
      const end = next === -1 ? text.length : position + next;
      scan.badSides.push(text.slice(position, end).trim());
      position = end;
    }
    const operator = operatorAt(position);
    if (!operator) return scan;
    scan.operators.push(operator);
    position = skipSpace(position + 2);
  }
}

/**
 * Parses a string that is entirely an expression: one reference, or references joined only by `||`
 * or only by `&&` (whitespace around operators and the whole string is ignored). Returns undefined
 * otherwise, including for mixed operators (`validateExpression` explains those).
 */
export function parseExpression(text: string): Expression | undefined {
  if (!text.includes(REFERENCE_SIGIL)) return undefined;
  const scan = scanExpression(text);
  if (scan.badSides.length > 0 || scan.refs.length === 0) return undefined;
  const [first, ...rest] = scan.refs;
  if (rest.length === 0) return { op: 'ref', refs: [first!] };
  const operators = new Set(scan.operators);
  if (operators.size !== 1) return undefined;
  return { op: operators.has('||') ? 'or' : 'and', refs: scan.refs };
}

/** Every reference embedded anywhere in a string, in order (whole expressions included). */
function referencesInString(text: string): Reference[] {
  if (!text.includes(REFERENCE_SIGIL)) return [];
  const found: Reference[] = [];
  for (const match of text.matchAll(referencePattern())) {
    const reference = referenceOf(match[0], match[1]!, match[2]!);
    if (reference) found.push(reference);
  }
  return found;
}

/**
 * Replaces every reference embedded in a string by what `replace` gives for it; a reference it
 * gives undefined for, and reference-shaped text that does not parse, stay as written.
 */
export function replaceReferences(text: string, replace: (reference: Reference) => string | undefined): string {
  if (!text.includes(REFERENCE_SIGIL)) return text;
  return text.replace(referencePattern(), (match, kind: string, suffix: string) => {
    const reference = referenceOf(match, kind, suffix);
    return (reference && replace(reference)) ?? match;
  });
}

/** Every reference in a params value, however deeply nested, in document order. Keys are not read. */
export function findReferences(value: unknown): Reference[] {
  if (typeof value === 'string') return referencesInString(value);
  if (Array.isArray(value)) return value.flatMap((item) => findReferences(item));
  if (isJsonObject(value)) return Object.values(value).flatMap((item) => findReferences(item));
  return [];
}

/** Parses an `_outputPath`: one target, alternatives (`†x || †y`) or a fan-out (`†x && †y`). */
export function parseOutputPath(text: string): OutputPath | undefined {
  // Every call of a fan-out writes to the same few paths: each is parsed once.
  return remembered(parsedOutputPaths, text, () => {
    const expression = parseExpression(text);
    return expression && freezeOutputPath({ op: expression.op, targets: expression.refs });
  });
}

const parsedOutputPaths = new Map<string, OutputPath | undefined>();

/** Frozen to the last segment, since every call writing to the path shares the parse. */
function freezeOutputPath(path: OutputPath): OutputPath {
  for (const target of path.targets) {
    Object.freeze(target.segments);
    Object.freeze(target);
  }
  Object.freeze(path.targets);
  return Object.freeze(path);
}

/** True when `text` holds reference-shaped text whose path has more than MAX_NESTING_DEPTH segments. */
function holdsTooLongPath(text: string): boolean {
  if (!text.includes(REFERENCE_SIGIL)) return false;
  const token = new RegExp(SEGMENT, 'guy');
  for (const match of text.matchAll(referencePattern())) {
    token.lastIndex = 0;
    let segments = 0;
    while (token.exec(match[2]!)) if (++segments > MAX_NESTING_DEPTH) return true;
  }
  return false;
}

/**
 * Explains, in a full sentence, what is wrong with a malformed expression: one that starts with `†`
 * and contains `||` or `&&` but mixes operators or has a side that is not a reference. For `output`
 * every `_outputPath` must parse, so any string that is not a reference or expression is a problem.
 * Returns undefined when there is nothing to say.
 */
export function validateExpression(text: string, where: 'input' | 'output'): string | undefined {
  const trimmed = text.trim();
  const looksLikeExpression = trimmed.startsWith(REFERENCE_SIGIL) && OPERATOR.test(trimmed);
  if (where === 'input' && !looksLikeExpression) {
    return holdsTooLongPath(text)
      ? `The text ${JSON.stringify(text)} holds a reference whose path has more than ${MAX_NESTING_DEPTH} segments, the most a reference's path may have.`
      : undefined;
  }
  const label = where === 'input' ? 'input expression' : 'output path';
  const explanation =
    where === 'input'
      ? '`†a || †b` takes the first reference that exists and `†a && †b` waits for all of them and takes the last'
      : '`†x || †y` declares alternative outcomes and `†x && †y` writes the result to every path';
  const scan = scanExpression(text);
  if (new Set(scan.operators).size > 1) {
    return `The ${label} ${JSON.stringify(text)} mixes \`||\` and \`&&\`; use one operator: ${explanation}.`;
  }
  const side = scan.badSides[0];
  if (side === undefined) return undefined;
  if (holdsTooLongPath(side)) {
    return `The ${label} ${JSON.stringify(text)} has a path of more than ${MAX_NESTING_DEPTH} segments, the most a reference's path may have.`;
  }
  if (!looksLikeExpression) {
    return `The ${label} ${JSON.stringify(text)} is not a reference; write it as \`†<kind>.<path>\`, for example \`†state.summary\` or \`†output\`.`;
  }
  const what = side === '' ? 'an empty side' : JSON.stringify(side);
  return `The ${label} ${JSON.stringify(text)} has ${what} where a reference such as \`†state.items[0].id\` was expected; ${explanation}.`;
}
