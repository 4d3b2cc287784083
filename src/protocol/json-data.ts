/**
 * Turning any JavaScript value into plain JSON data, once, at a boundary: what JSON cannot hold is
 * refused (Activity results, TOOL-20) or replaced by a placeholder (the trace, TRACE-13), never
 * silently dropped, and never a crash.
 */
import { pointerSegment } from './json.js';

/** How deep a value may nest; deeper parts are not JSON data here (TOOL-20, TRACE-13). */
export const MAX_JSON_DEPTH = 512;

/** Where a value is not JSON (a JSON pointer, `''` for the whole value) and why. */
export interface NotJson {
  pointer: string;
  problem: string;
}

/** A value that is not JSON data, found by {@link toJsonData} without a `replace`. */
export class NotJsonError extends Error {
  constructor(
    readonly pointer: string,
    readonly problem: string,
    /** True when the value is JSON but nests deeper than allowed. */
    readonly tooDeep = false,
  ) {
    super(`${pointer === '' ? 'the value' : pointer} is ${problem}`);
    this.name = 'NotJsonError';
  }
}

/** Options of {@link toJsonData}. */
export interface ToJsonDataOptions {
  /** The value to put in place of a part that is not JSON; without it, such a part throws {@link NotJsonError}. */
  replace?: (notJson: NotJson) => unknown;
  /** How many containers deep the value may nest (default {@link MAX_JSON_DEPTH}). */
  maxDepth?: number;
}

/**
 * A plain copy of `value` made of null, booleans, finite numbers, strings, arrays and objects with
 * own properties only, as `JSON.stringify` sees it (an object's `toJSON` is used, object properties
 * whose value is `undefined` are left out), except that nothing is lost without a word: a BigInt, a
 * function, a Symbol, a number that is not finite, `undefined` in an array, a Map or Set, a circular
 * reference, nesting deeper than {@link MAX_JSON_DEPTH} levels, or a getter, `toJSON` or proxy that
 * throws is refused (or replaced). `undefined` at the top stays `undefined`.
 */
export function toJsonData(value: unknown, options: ToJsonDataOptions = {}): unknown {
  return convert(value, '', '', 0, new Set(), options);
}

function notJson(at: string, problem: string, options: ToJsonDataOptions): unknown {
  if (!options.replace) throw new NotJsonError(at, problem);
  return options.replace({ pointer: at, problem });
}

function convert(value: unknown, key: string, at: string, depth: number, ancestors: Set<object>, options: ToJsonDataOptions): unknown {
  try {
    return convertReadable(value, key, at, depth, ancestors, options);
  } catch (error) {
    // A throwing getter, toJSON or proxy trap, caught where it happened so the pointer is exact.
    if (error instanceof NotJsonError) throw error;
    return notJson(at, `a value that cannot be read (${messageOf(error)})`, options);
  }
}

/** Where the walk is: the key the value sits under, its pointer, its depth, and the objects above it. */
interface Position {
  key: string;
  at: string;
  depth: number;
  ancestors: Set<object>;
}

function convertReadable(value: unknown, key: string, at: string, depth: number, ancestors: Set<object>, options: ToJsonDataOptions): unknown {
  const current = unwrap(value, key);
  if (current instanceof ToJsonFailure) return notJson(at, `an object whose toJSON threw (${messageOf(current.error)})`, options);
  if (typeof current !== 'object') return convertScalar(current, at, options);
  if (current === null) return null;
  return convertContainer(current, { key, at, depth, ancestors }, options);
}

/** A `toJSON` that threw, kept apart from any value it could have returned. */
class ToJsonFailure {
  constructor(readonly error: unknown) {}
}

/** The value as JSON.stringify sees it: what its `toJSON` returns, boxed primitives unboxed. */
function unwrap(value: unknown, key: string): unknown {
  let current = value;
  if ((typeof current === 'object' && current !== null) || typeof current === 'bigint') {
    const toJSON = (current as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      try {
        current = toJSON.call(current, key) as unknown;
      } catch (error) {
        return new ToJsonFailure(error);
      }
    }
  }
  if (current instanceof Number || current instanceof String || current instanceof Boolean) current = current.valueOf();
  return current;
}

function convertScalar(value: unknown, at: string, options: ToJsonDataOptions): unknown {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? value : notJson(at, `${String(value)}, which is not a JSON number`, options);
    case 'bigint':
      return notJson(at, `a BigInt (${value}n)`, options);
    case 'symbol':
      return notJson(at, `a Symbol (${value.description ?? ''})`, options);
    case 'function':
      return notJson(at, `a function${value.name ? ` (${value.name})` : ''}`, options);
    default:
      // undefined, strings and booleans are themselves.
      return value;
  }
}

function convertContainer(object: object, position: Position, options: ToJsonDataOptions): unknown {
  const { at, depth, ancestors } = position;
  if (ancestors.has(object)) return notJson(at, 'a circular reference (an object that contains itself)', options);
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  if (depth >= maxDepth) {
    if (!options.replace) throw new NotJsonError(at, `nested deeper than ${maxDepth} levels`, true);
    return notJson(at, `nested deeper than ${maxDepth} levels`, options);
  }
  if (object instanceof Map || object instanceof Set) return notJson(at, `a ${object instanceof Map ? 'Map' : 'Set'}`, options);
  ancestors.add(object);
  try {
    return Array.isArray(object) ? convertArray(object, position, options) : convertObject(object, position, options);
  } finally {
    ancestors.delete(object);
  }
}

function convertArray(array: unknown[], { at, depth, ancestors }: Position, options: ToJsonDataOptions): unknown[] {
  const copy: unknown[] = [];
  for (let index = 0; index < array.length; index++) {
    const itemAt = `${at}/${index}`;
    const item = convert(array[index], String(index), itemAt, depth + 1, ancestors, options);
    copy.push(item === undefined ? notJson(itemAt, 'undefined inside an array', options) : item);
  }
  return copy;
}

function convertObject(object: object, { at, depth, ancestors }: Position, options: ToJsonDataOptions): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const name of Object.keys(object)) {
    const itemAt = `${at}/${pointerSegment(name)}`;
    let item: unknown;
    try {
      item = (object as Record<string, unknown>)[name];
    } catch (error) {
      entries.push([name, notJson(itemAt, `a property whose getter threw (${messageOf(error)})`, options)]);
      continue;
    }
    const converted = convert(item, name, itemAt, depth + 1, ancestors, options);
    if (converted !== undefined) entries.push([name, converted]);
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a plain key.
  return Object.fromEntries(entries);
}

function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an error that cannot be printed';
  }
}

/** The string that stands for a part that is not JSON where a value must be written anyway (TRACE-13, CLI-4). */
export function notJsonPlaceholder({ problem }: NotJson): string {
  return `[not JSON: ${problem}]`;
}
