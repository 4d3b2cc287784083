/** Variables (spec/variables.md): `†` references, input expressions, output paths, and reading data records into views. */
import { JSONPath } from 'jsonpath-plus';
import { CallError, ProtocolError } from './errors.js';
import { MAX_NESTING_DEPTH } from './json.js';
import type { DataMessage, Message, OutputMethod } from './types.js';

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

/** The answer of a read: `found` is false when nothing exists at the path (`null` is found). */
export interface ReadResult {
  found: boolean;
  value?: unknown;
}

/** Resolves one reference for `resolveValue`, usually with `readPath` for the call's instance. */
export type ReferenceLookup = (reference: Reference) => ReadResult;

/** The outcome of resolving call parameters: the value, or every reference still missing. */
export type Resolution = { status: 'resolved'; value: unknown } | { status: 'blocked'; missing: Reference[] };

/** One write to a kind's data, taken from a data-like message (see `dataRecordOf`). */
export interface DataRecord {
  kind: string;
  /** Absent = global (visible to every instance). */
  instance?: string;
  /** Where below the kind the value goes; [] = the whole kind. */
  path: PathSegment[];
  method: OutputMethod;
  value: unknown;
  call?: string;
  date?: string;
}

/** The reference sigil. */
export const REFERENCE_SIGIL = '†';

/** How far past the end of an array a write may reach (the gap is filled with nulls). */
export const MAX_INDEX_GAP = 10_000;

/** The five ways a write combines with what is already at its path. */
export const OUTPUT_METHODS: readonly OutputMethod[] = ['set', 'merge', 'assign', 'push', 'concat'];

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
  const parts = JSONPath.toPathArray(`$${suffix}`).slice(1);
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

/** Parses a path below a kind as written in `_path` (`items[0].name`, `["x y"]`; '' = the root). */
export function parsePath(path: string): PathSegment[] | undefined {
  if (path === '') return [];
  const suffix = path.startsWith('[') ? path : `.${path}`;
  const reference = parseReference(`${REFERENCE_SIGIL}_${suffix}`);
  return reference?.segments;
}

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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every reference in a params value, however deeply nested, in document order. Keys are not read. */
export function findReferences(value: unknown): Reference[] {
  if (typeof value === 'string') return referencesInString(value);
  if (Array.isArray(value)) return value.flatMap((item) => findReferences(item));
  if (isPlainObject(value)) return Object.values(value).flatMap((item) => findReferences(item));
  return [];
}

/** How an interpolated value reads inside a template string. */
function interpolationOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}

type Walk = { value: unknown; missing: Reference[] };

function resolveString(text: string, lookup: ReferenceLookup): Walk {
  if (!text.includes(REFERENCE_SIGIL)) return { value: text, missing: [] };
  const expression = parseExpression(text);
  if (expression) {
    const results = expression.refs.map((reference) => ({ reference, result: lookup(reference) }));
    const missing = results.filter(({ result }) => !result.found).map(({ reference }) => reference);
    if (expression.op === 'or') {
      const first = results.find(({ result }) => result.found);
      return first ? { value: first.result.value, missing: [] } : { value: undefined, missing };
    }
    if (missing.length > 0) return { value: undefined, missing };
    return { value: results[results.length - 1]!.result.value, missing: [] };
  }
  const missing: Reference[] = [];
  const value = text.replace(referencePattern(), (match, kind: string, suffix: string) => {
    const reference = referenceOf(match, kind, suffix);
    if (!reference) return match;
    const result = lookup(reference);
    if (!result.found) {
      missing.push(reference);
      return match;
    }
    return interpolationOf(result.value);
  });
  return { value, missing };
}

function walk(value: unknown, lookup: ReferenceLookup): Walk {
  if (typeof value === 'string') return resolveString(value, lookup);
  if (Array.isArray(value)) {
    const items = value.map((item) => walk(item, lookup));
    return { value: items.map((item) => item.value), missing: items.flatMap((item) => item.missing) };
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).map(([key, item]) => [key, walk(item, lookup)] as const);
    // Object.fromEntries defines properties, so a `__proto__` key stays an ordinary key.
    return {
      value: Object.fromEntries(entries.map(([key, item]) => [key, item.value])),
      missing: entries.flatMap(([, item]) => item.missing),
    };
  }
  return { value, missing: [] };
}

/**
 * Resolves the references in call parameters without touching the input. A string that is one
 * reference takes the referenced value with its type; `†a || †b` the first found; `†a && †b` the
 * last once all are found; a template string interpolates (strings as they are, other values as
 * JSON). Anything missing blocks the whole value and is listed once per reference text.
 */
export function resolveValue(value: unknown, lookup: ReferenceLookup): Resolution {
  const result = walk(value, lookup);
  if (result.missing.length === 0) return { status: 'resolved', value: result.value };
  const seen = new Set<string>();
  const missing = result.missing.filter((reference) => !seen.has(reference.text) && seen.add(reference.text));
  return { status: 'blocked', missing };
}

/** Parses an `_outputPath`: one target, alternatives (`†x || †y`) or a fan-out (`†x && †y`). */
export function parseOutputPath(text: string): OutputPath | undefined {
  const expression = parseExpression(text);
  return expression && { op: expression.op, targets: expression.refs };
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

/**
 * The record a data-like message contributes: `data` (kind `kind`, default 'data'), `input` (kind
 * 'input'; none for a template slot without `input`) and `state` (kind 'state'). A message without
 * `_path` is a document message, merged at the root; a write carries `_path` and `_outputMethod`
 * (default `set`). Other messages give undefined. Throws a ProtocolError (`invalid_request`) for an
 * unreadable `_path` or `_outputMethod`.
 */
export function dataRecordOf(message: Message): DataRecord | undefined {
  let kind: string;
  let value: unknown;
  if (message.type === 'data') {
    kind = typeof message.kind === 'string' ? message.kind : 'data';
    value = message.data;
  } else if (message.type === 'input') {
    if (message.input === undefined) return undefined;
    kind = 'input';
    value = message.input;
  } else if (message.type === 'state') {
    kind = 'state';
    value = message.state;
  } else {
    return undefined;
  }
  const record: DataRecord = { kind, path: [], method: 'merge', value };
  if (typeof message._instance === 'string') record.instance = message._instance;
  if (message._path !== undefined) {
    const path = typeof message._path === 'string' ? parsePath(message._path) : undefined;
    if (!path) {
      throw new ProtocolError(
        'invalid_request',
        `The ${message.type} message of kind "${kind}" has the _path ${JSON.stringify(message._path)}, which is not a path such as "items[0].name" ('' for the whole kind).`,
      );
    }
    const method = message._outputMethod ?? 'set';
    if (!OUTPUT_METHODS.includes(method as OutputMethod)) {
      throw new ProtocolError(
        'invalid_request',
        `The ${message.type} message of kind "${kind}" has the _outputMethod ${JSON.stringify(method)}; expected one of ${OUTPUT_METHODS.join(', ')}.`,
      );
    }
    record.path = path;
    record.method = method as OutputMethod;
  }
  if (typeof message._call === 'string') record.call = message._call;
  if (typeof message._date === 'string') record.date = message._date;
  return record;
}

/** Options of a write: how it combines, which call made it, for which instance, and when. */
export interface WriteOptions {
  method?: OutputMethod;
  call?: string;
  instance?: string;
  date?: string;
}

/**
 * The append-only data message that writes `value` at a reference: `_path` is the reference's path,
 * `_outputMethod` defaults to `set`, `_date` to now.
 */
export function makeWrite(target: Reference, value: unknown, options: WriteOptions = {}): DataMessage {
  return {
    type: 'data',
    kind: target.kind,
    data: value,
    _path: target.path,
    _outputMethod: options.method ?? 'set',
    ...(options.call !== undefined ? { _call: options.call } : {}),
    _date: options.date ?? new Date().toISOString(),
    ...(options.instance !== undefined ? { _instance: options.instance } : {}),
  };
}

/**
 * The records of a kind that an instance sees, oldest first: the global ones, then the instance's
 * own (so they override the global ones for that instance only). Without an instance, only global
 * records. Array order is the chronological order (the order writes completed).
 */
export function visibleRecords(records: readonly DataRecord[], kind: string, instance: string | undefined): DataRecord[] {
  const global = records.filter((record) => record.kind === kind && record.instance === undefined);
  if (instance === undefined) return global;
  return [...global, ...records.filter((record) => record.kind === kind && record.instance === instance)];
}

/** The array index a segment addresses, if it is one (a number or a canonical digit string). */
function indexOf(segment: PathSegment): number | undefined {
  if (typeof segment === 'number') return segment;
  return CANONICAL_INDEX.test(segment) ? Number(segment) : undefined;
}

/** Sets an own data property, so keys such as `__proto__` never reach the prototype. */
function defineKey(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function copyObject(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object));
}

/** Reads the value at a path; arrays are indexed by numbers (or digit strings), objects by keys. */
export function readAt(value: unknown, path: readonly PathSegment[]): ReadResult {
  let node = value;
  for (const segment of path) {
    if (Array.isArray(node)) {
      const index = indexOf(segment);
      if (index === undefined || index >= node.length) return { found: false };
      node = node[index];
    } else if (isPlainObject(node)) {
      const key = String(segment);
      if (!Object.hasOwn(node, key)) return { found: false };
      node = node[key];
    } else {
      return { found: false };
    }
  }
  return node === undefined ? { found: false } : { found: true, value: node };
}

/**
 * Applies writes to a state, oldest first, without changing anything it was given: a container
 * is copied the first time a write changes it, and the copies (the fold's own) are changed in
 * place after that. Folding n writes into one object thus takes time linear in n, not n².
 */
class Fold {
  private readonly own = new WeakSet<object>();

  constructor(public state: unknown) {}

  /** Applies one write (see `applyWrite`). */
  apply(path: readonly PathSegment[], method: OutputMethod, value: unknown): void {
    this.state = this.updateAt(this.state, path, 0, method, value);
  }

  /** A container the fold may change: `fresh` itself, made the fold's own. */
  private adopt<T extends object>(fresh: T): T {
    this.own.add(fresh);
    return fresh;
  }

  /** The fold's own copy of an object (the object itself when it already is). */
  private ownObject(object: Record<string, unknown>): Record<string, unknown> {
    return this.own.has(object) ? object : this.adopt(copyObject(object));
  }

  /** The fold's own copy of an array (the array itself when it already is). */
  private ownArray(array: unknown[]): unknown[] {
    return this.own.has(array) ? array : this.adopt(array.slice());
  }

  /** Deep merge: objects merge key by key; arrays, primitives and merges into non-objects replace. */
  private merge(existing: unknown, incoming: unknown): unknown {
    // A merge that brings nothing (a data message without a value) keeps what is there.
    if (incoming === undefined) return existing;
    if (!isPlainObject(existing) || !isPlainObject(incoming)) return incoming;
    const merged = this.ownObject(existing);
    for (const [key, value] of Object.entries(incoming)) {
      defineKey(merged, key, Object.hasOwn(merged, key) ? this.merge(merged[key], value) : value);
    }
    return merged;
  }

  /** Combines a written value with what is at its path, by method. */
  private combine(existing: unknown, method: OutputMethod, value: unknown): unknown {
    switch (method) {
      case 'set':
        return value;
      case 'merge':
        return this.merge(existing, value);
      case 'assign':
        // Object.assign semantics into an object; anything else at either end is replaced.
        if (value === undefined) return existing;
        if (!isPlainObject(existing) || !isPlainObject(value)) return value;
        {
          const assigned = this.ownObject(existing);
          for (const [key, item] of Object.entries(value)) defineKey(assigned, key, item);
          return assigned;
        }
      case 'push': {
        const array = Array.isArray(existing) ? this.ownArray(existing) : this.adopt([] as unknown[]);
        array.push(value);
        return array;
      }
      case 'concat': {
        const array = Array.isArray(existing) ? this.ownArray(existing) : this.adopt([] as unknown[]);
        for (const item of Array.isArray(value) ? value : [value]) array.push(item);
        return array;
      }
    }
  }

  /** Updates the node at `path[depth...]`, creating missing containers on the way. */
  private updateAt(node: unknown, path: readonly PathSegment[], depth: number, method: OutputMethod, value: unknown): unknown {
    if (depth === path.length) return this.combine(node, method, value);
    const segment = path[depth]!;
    const index = indexOf(segment);
    if ((Array.isArray(node) && index !== undefined) || (!isPlainObject(node) && !Array.isArray(node) && typeof segment === 'number')) {
      const length = Array.isArray(node) ? node.length : 0;
      // Gaps become null, as they would in the JSON the trace shows; a far-off index is refused
      // rather than padding a huge array on a model's whim.
      if (index! - length > MAX_INDEX_GAP) {
        throw new CallError('invalid_params', `Refusing to write at index ${index} of an array of ${length} items (at most ${MAX_INDEX_GAP} past its end).`);
      }
      const array = Array.isArray(node) ? this.ownArray(node) : this.adopt([] as unknown[]);
      const existing = index! < array.length ? array[index!] : undefined;
      while (array.length < index!) array.push(null);
      array[index!] = this.updateAt(existing, path, depth + 1, method, value);
      return array;
    }
    // A key below an array turns it into an object that keeps the elements under their indices.
    const object = isPlainObject(node) ? this.ownObject(node) : this.adopt(Array.isArray(node) ? copyObject({ ...node }) : {});
    const key = String(segment);
    defineKey(object, key, this.updateAt(Object.hasOwn(object, key) ? object[key] : undefined, path, depth + 1, method, value));
    return object;
  }
}

/**
 * Applies one write to a state and returns the new state; the input is never mutated. `set`
 * replaces; `merge` deep-merges objects; `assign` shallow-assigns into an object; `push` appends the
 * value as one element; `concat` appends the elements of an array value. Writing below missing
 * containers creates objects, or arrays where the segment is a number.
 */
export function applyWrite(state: unknown, path: readonly PathSegment[], method: OutputMethod, value: unknown): unknown {
  const fold = new Fold(state);
  fold.apply(path, method, value);
  return fold.state;
}

/** A detached copy, so callers can never change the values records hold. */
function detached<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    // Values that cannot be cloned (functions an Activity returned) are handed out as they are.
    return value;
  }
}

/** The reference fold: applies every record, oldest to newest, starting from nothing. */
export function foldRecords(records: readonly DataRecord[]): unknown {
  const fold = new Fold(undefined);
  for (const record of records) fold.apply(record.path, record.method, record.value);
  return detached(fold.state);
}

/** True when `prefix` is a prefix of (or equal to) `path`; `0` and `"0"` address the same slot. */
function isPrefix(prefix: readonly PathSegment[], path: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(segment) === String(path[i]));
}

/**
 * Reads a path of a kind for an instance without folding everything: walks the visible records
 * newest to oldest, stops at the first `set` at (or above) the path, collects the related writes
 * on the way (at, above or below the path; unrelated ones are skipped) and applies them oldest to
 * newest on top of that `set`. The walk runs for the path up to its first array index and the rest
 * is read from that value, because the position of an element depends on writes elsewhere in its
 * array; the answer always equals reading the full fold of the visible records.
 */
export function readPath(records: readonly DataRecord[], kind: string, instance: string | undefined, path: readonly PathSegment[]): ReadResult {
  const stable = stablePath(path);
  const visible = visibleRecords(records, kind, instance);
  const collected: DataRecord[] = [];
  let base: DataRecord | undefined;
  for (let i = visible.length - 1; i >= 0; i -= 1) {
    const record = visible[i]!;
    if (isPrefix(record.path, stable)) {
      if (record.method === 'set') {
        base = record;
        break;
      }
      collected.push(record);
    } else if (isPrefix(stable, record.path)) {
      collected.push(record);
    }
  }
  return readRelated(base, collected.reverse(), path);
}

/** The part of a path a read walks the records for: up to its first array index (see `readPath`). */
export function stablePath(path: readonly PathSegment[]): readonly PathSegment[] {
  const firstIndex = path.findIndex((segment) => indexOf(segment) !== undefined);
  return firstIndex === -1 ? path : path.slice(0, firstIndex);
}

/**
 * Reads `path` from the records related to it (see `readPath`): the newest `set` at or above its
 * stable part, if any, then the newer writes at, above or below it, oldest first.
 */
export function readRelated(base: DataRecord | undefined, related: readonly DataRecord[], path: readonly PathSegment[]): ReadResult {
  const fold = new Fold(undefined);
  if (base) fold.apply(base.path, 'set', base.value);
  for (const record of related) fold.apply(record.path, record.method, record.value);
  const result = readAt(fold.state, path);
  return result.found ? { found: true, value: detached(result.value) } : { found: false };
}

/** The whole merged value of a kind for an instance (`found` is false when nothing was written). */
export function viewOf(records: readonly DataRecord[], kind: string, instance: string | undefined): ReadResult {
  return readPath(records, kind, instance, []);
}

/** A lookup for `resolveValue` that reads references from records for one instance. */
export function createLookup(records: readonly DataRecord[], instance: string | undefined): ReferenceLookup {
  return (reference) => readPath(records, reference.kind, instance, reference.segments);
}
