/** Normalisation: the shorthand forms of messages and tools turned into one canonical form. */
import { TOOL_META_PROPERTIES } from './tools.js';
import { isJsonObject, type Message, type ToolSchema } from './types.js';

/** Tool meta-properties whose top-level plain value is shorthand for `{const: value}`. */

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
    if ((TOOL_META_PROPERTIES as readonly string[]).includes(key)) {
      nextProperties[key] = { const: value };
    } else if (key === '_output') {
      nextProperties._output = value;
    } else if (key !== 'type') {
      kept.push([key, value]);
    }
  }
  // A tool is an object schema; any other `type` is kept so validation can name it.
  return { type: (rest.type ?? 'object') as 'object', ...Object.fromEntries(kept), properties: nextProperties as ToolSchema['properties'] };
}

const TURN_TYPES = new Set(['system', 'user', 'assistant']);

/** Moves every field but the reserved ones into `field` (the flat shorthand of input/state/meta). */
function foldFlat(message: Record<string, unknown>, field: string, reserved: string[]): Record<string, unknown> {
  if (field in message) return message;
  const entries = Object.entries(message);
  const kept = Object.fromEntries(entries.filter(([key]) => reserved.includes(key)));
  const folded = Object.fromEntries(entries.filter(([key]) => !reserved.includes(key)));
  if (Object.keys(folded).length === 0) return kept;
  return { ...kept, [field]: folded };
}

/** Canonical form of a plain turn: `{type, text}` from `message`, `content` or `{role, content}`. */
export function normalizeTurn(message: Record<string, unknown>): Message {
  const type = (message.type ?? message.role) as string;
  const text = message.text ?? message.message ?? message.content;
  const { message: _message, content: _content, role: _role, ...rest } = message;
  if (type === 'text') {
    const role = message.role;
    return { ...rest, type, text, ...(role === undefined ? {} : { role }) } as Message;
  }
  return { ...rest, type, text } as Message;
}

/** The built-in shorthand rules by message type (custom handlers bring their own). */
export const builtinNormalizers: Record<string, (message: Record<string, unknown>) => Message> = {
  system: normalizeTurn,
  user: normalizeTurn,
  assistant: normalizeTurn,
  text: normalizeTurn,
  data: (message) => ({ ...message, kind: message.kind ?? 'data' }) as Message,
  input: (message) => foldFlat(message, 'input', ['type', 'schema', 'description', '_instance']) as Message,
  state: (message) => foldFlat(message, 'state', ['type', 'schema', 'description', '_instance']) as Message,
  meta: (message) => foldFlat(message, 'meta', ['type']) as Message,
  plan: (message) => ({ ...message, mode: message.mode ?? 'eager', calls: message.calls ?? [] }) as Message,
  tool: (message) => {
    const tools = message.tool;
    if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) return message as Message;
    const normalized = Object.entries(tools as Record<string, unknown>).map(([name, schema]) => [
      name,
      isJsonObject(schema) ? normalizeTool(schema as ToolSchema) : schema,
    ]);
    return { ...message, tool: Object.fromEntries(normalized) } as Message;
  },
};

/** Gives a chat-style `{role, content}` message without `type` its type. */
export function withType(message: Record<string, unknown>): Record<string, unknown> {
  if (typeof message.type === 'string') return message;
  if (typeof message.role === 'string' && TURN_TYPES.has(message.role)) return { ...message, type: message.role };
  return message;
}
