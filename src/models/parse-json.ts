/** The one safe way to parse untrusted model text as JSON: a result union, never a throw. */

/** The outcome of parsing text as JSON. */
export type ParseJsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses model text as JSON. Text wrapped in a Markdown code fence (some local models add one
 * even when asked for JSON) is unwrapped first; nothing else is repaired.
 */
export function parseJson(text: string): ParseJsonResult {
  const first = tryParse(text);
  if (first.ok) return first;
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  if (fenced?.[1] !== undefined) {
    const inner = tryParse(fenced[1]);
    if (inner.ok) return inner;
  }
  return first;
}

function tryParse(text: string): ParseJsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
