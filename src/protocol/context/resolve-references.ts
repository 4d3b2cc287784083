/** Resolving references (spec/variables.md): call parameters with their `†` references replaced by the values they read. */
import { readPath, type DataRecord, type ReadResult } from '../variables/data-records.js';
import { parseExpression, REFERENCE_SIGIL, replaceReferences, type Reference } from '../variables/references.js';
import { isJsonObject } from '../types.js';

/** Resolves one reference for `resolveValue`, usually with `readPath` for the call's instance. */
export type ReferenceLookup = (reference: Reference) => ReadResult;

/** The outcome of resolving call parameters: the value, or every reference still missing. */
export type Resolution = { status: 'resolved'; value: unknown } | { status: 'blocked'; missing: Reference[] };

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
  const value = replaceReferences(text, (reference) => {
    const result = lookup(reference);
    if (!result.found) {
      missing.push(reference);
      return undefined;
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
  if (isJsonObject(value)) {
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

/** A lookup for `resolveValue` that reads references from records for one instance. */
export function createLookup(records: readonly DataRecord[], instance: string | undefined): ReferenceLookup {
  return (reference) => readPath(records, reference.kind, instance, reference.segments);
}
