/**
 * The one way a JSON document is read: text parsed safely (never a bare JSON.parse), then checked
 * against one of the project's schemas, every problem naming the document and a JSON pointer
 * (ERR-7). The result is a union, so callers decide which error class a bad document becomes.
 */
import type { Problem } from './errors.js';
import { parseJson } from './json.js';
import { describeErrors, documentSchema } from './schemas.js';

/** A document read, or every problem found in it. */
export type DocumentReading<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/**
 * Parses `text` (read from `location`) and, when `schema` names one of spec/schemas (e.g.
 * `cassette.schema.json`), validates it. A syntax error is one problem with its line and column.
 */
export function readDocument<T = unknown>(text: string, location: string, schema?: string): DocumentReading<T> {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, problems: [{ document: location, pointer: '', message: parsed.message, line: parsed.line, column: parsed.column }] };
  return schema === undefined ? { ok: true, value: parsed.value as T } : checkDocument<T>(parsed.value, location, schema);
}

/** Validates an already parsed document against one of spec/schemas. */
export function checkDocument<T = unknown>(value: unknown, location: string, schema: string): DocumentReading<T> {
  const validate = documentSchema(schema);
  if (validate(value)) return { ok: true, value: value as T };
  return { ok: false, problems: describeErrors(validate.errors).map((issue) => ({ document: location, pointer: issue.pointer, message: issue.message })) };
}
