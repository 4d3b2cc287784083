/** Data records (spec/variables.md, spec/data-and-instances.md): the writes data-like messages hold, folded into the values reads see. */
import { CallError } from '../errors.js';
import type { MessageProblem } from '../errors.js';
import { arrayIndexOf, parsePath, type PathSegment, type Reference } from './references.js';
import { isJsonObject, type BaseMessage, type Call, type DataMessage, type OutputMethod } from '../types.js';

/** The answer of a read: `found` is false when nothing exists at the path (`null` is found). */
export interface ReadResult {
  found: boolean;
  value?: unknown;
}

/** One write to a kind's data, taken from a data-like message (see `recordFor`). */
export interface DataRecord {
  kind: string;
  /** Absent = global (visible to every instance). */
  instance?: string;
  /** Where below the kind the value goes; [] = the whole kind. */
  path: readonly PathSegment[];
  method: OutputMethod;
  value: unknown;
  /** The call that wrote it (act 008): the call as written; a string is the older form, its id. */
  call?: Call | string;
  date?: string;
}

/** How far past the end of an array a write may reach (the gap is filled with nulls). */
export const MAX_INDEX_GAP = 10_000;

/** The five ways a write combines with what is already at its path. */
export const OUTPUT_METHODS: readonly OutputMethod[] = ['set', 'merge', 'assign', 'push', 'concat'];

/** What a data-like message contributes to its kind's data: a record or none, or why its write cannot be read. */
export type RecordOutcome = { ok: true; record?: DataRecord } | { ok: false; problem: MessageProblem };

/**
 * The record of a data-like message holding `value` of `kind`. A message without `_path` is a
 * document message, merged at the root; a write carries `_path` and `_outputMethod` (default
 * `set`), and an unreadable one is a problem at `/_path` or `/_outputMethod` (VAR-12, VAR-13).
 */
export function recordFor(kind: string, value: unknown, message: BaseMessage): RecordOutcome {
  const record: DataRecord = { kind, path: [], method: 'merge', value };
  if (typeof message._instance === 'string') record.instance = message._instance;
  if (message._path !== undefined) {
    const path = typeof message._path === 'string' ? parsePath(message._path) : undefined;
    if (!path) {
      const text = `The ${message.type} message of kind "${kind}" has the _path ${JSON.stringify(message._path)}, which is not a path such as "items[0].name" ('' for the whole kind).`;
      return { ok: false, problem: { pointer: '/_path', message: text } };
    }
    const method = message._outputMethod ?? 'set';
    if (!isOutputMethod(method)) {
      const text = `The ${message.type} message of kind "${kind}" has the _outputMethod ${JSON.stringify(method)}; expected one of ${OUTPUT_METHODS.join(', ')}.`;
      return { ok: false, problem: { pointer: '/_outputMethod', message: text } };
    }
    record.path = path;
    record.method = method;
  }
  if (typeof message._call === 'string' || isJsonObject(message._call)) record.call = message._call as Call | string;
  if (typeof message._date === 'string') record.date = message._date;
  return { ok: true, record };
}

/** True for the names of the five output methods. */
export function isOutputMethod(value: unknown): value is OutputMethod {
  return OUTPUT_METHODS.some((method) => method === value);
}

/** Options of a write: how it combines, which call made it (as written, PLAN-10), for which instance, and when. */
export interface WriteOptions {
  method?: OutputMethod;
  call?: Call | string;
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
      const index = arrayIndexOf(segment);
      if (index === undefined || index >= node.length) return { found: false };
      node = node[index];
    } else if (isJsonObject(node)) {
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
    if (!isJsonObject(existing) || !isJsonObject(incoming)) return incoming;
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
        if (!isJsonObject(existing) || !isJsonObject(value)) return value;
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
    const index = arrayIndexOf(segment);
    if ((Array.isArray(node) && index !== undefined) || (!isJsonObject(node) && !Array.isArray(node) && typeof segment === 'number')) {
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
    const object = isJsonObject(node) ? this.ownObject(node) : this.adopt(Array.isArray(node) ? copyObject({ ...node }) : {});
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
  const firstIndex = path.findIndex((segment) => arrayIndexOf(segment) !== undefined);
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
