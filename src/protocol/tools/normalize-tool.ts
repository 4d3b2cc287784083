/** Normalisation of tools: a tool's shorthand meta-properties moved into one canonical schema (TOOL-3). */
import { TOOL_META_PROPERTIES } from './tools.js';
import type { ToolSchema } from '../types.js';

// Records keyed by the document's own names are built with spreads and `Object.fromEntries`, never
// by assignment: `record[name] = value` with the name `__proto__` would set the prototype and drop
// the entry without a word, so validation could not report it (TOOL-1).

/**
 * Canonicalises a tool schema: top-level `_delegate`/`_activity`/`_scopes`/`_resolve`/`_approval` values move
 * into `properties` as `const`, a top-level `_output` schema moves to `properties._output`, and
 * `type: "object"` is made explicit. Idempotent; the input is not mutated.
 */
export function normalizeTool(tool: ToolSchema): ToolSchema {
  const { properties, ...rest } = tool;
  const nextProperties: Record<string, unknown> = { ...(properties ?? {}) };
  const kept: [string, unknown][] = [];
  for (const [key, value] of Object.entries(rest)) {
    if (TOOL_META_PROPERTIES.some((name) => name === key)) {
      nextProperties[key] = { const: value };
    } else if (key === '_output') {
      nextProperties._output = value;
    } else if (key !== 'type') {
      kept.push([key, value]);
    }
  }
  // A tool is an object schema; any other `type` is kept so validation can name it. The properties
  // are not validated yet (a moved `_output` may be no schema at all): validation judges them next.
  return { type: rest.type ?? 'object', ...Object.fromEntries(kept), properties: nextProperties as ToolSchema['properties'] };
}
