/** Parsing a model's answer text as JSON: the project's safe parser, tolerant of a Markdown code fence. */
import { parseJson, type ParseResult } from '../protocol/json.js';

/**
 * Parses model text as JSON. Text wrapped in a Markdown code fence (some local models add one
 * even when asked for JSON) is unwrapped first; nothing else is repaired.
 */
export function parseModelJson(text: string): ParseResult {
  const first = parseJson(text);
  if (first.ok) return first;
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  if (fenced?.[1] !== undefined) {
    const inner = parseJson(fenced[1]);
    if (inner.ok) return inner;
  }
  return first;
}

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
