/** How messages read in the prompt: user turns holding headed blocks of JSON. */
import type { RenderState } from './handlers.js';
import { formatReference } from '../variables/references.js';
import { isJsonObject } from '../types.js';

/**
 * A value as one line of compact JSON, unfenced: compact JSON never holds a line break, so the line
 * itself delimits it, and a fence would cost 12 characters a value in every prompt (MSG-30); indentation would roughly double
 * nested values, and models read JSON without it (MSG-24).
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value);
}

/** Appends a user turn to the rendered messages. */
export function pushUser(state: RenderState, content: string): void {
  state.messages.push({ role: 'user', content });
}

/** Renders a merged data-like message as a readable block: heading, description, value, schema. */
export function renderDataBlock(kind: string, value: unknown, message: { description?: unknown; schema?: unknown; _instance?: unknown }): string {
  const lines = [heading(kind, message)];
  if (typeof message.description === 'string') lines.push(message.description);
  lines.push(jsonLine(value));
  if (message.schema !== undefined) lines.push(`Schema of ${kind}:`, jsonLine(message.schema));
  return lines.join('\n');
}

/** The heading of a data block: the kind, and the instance when there is one. */
function heading(kind: string, message: { _instance?: unknown }): string {
  return typeof message._instance === 'string' ? `## ${kind} (instance "${message._instance}")` : `## ${kind}`;
}

/**
 * Renders a kind that holds no value yet, only the schema it is meant to follow (MSG-19): the
 * heading, the description, a sentence saying nothing is written yet and how to fill it, the
 * references of its top-level properties (so planned calls can wire `_outputPath`s to them), and
 * the schema.
 */
export function renderIntendedShape(kind: string, message: { description?: unknown; schema?: unknown; _instance?: unknown }): string {
  const lines = [heading(kind, message)];
  if (typeof message.description === 'string') lines.push(message.description);
  lines.push(
    `Nothing is written to ${kind} yet. It is meant to take the shape below: write its values with "_outputPath" and read them with references once they are written.`,
  );
  const properties = isJsonObject(message.schema) && isJsonObject(message.schema.properties) ? Object.keys(message.schema.properties) : [];
  const slots = properties.map((name) => slotReference(kind, name)).filter((slot) => slot !== undefined);
  if (slots.length > 0) lines.push(`Its slots: ${slots.join(', ')}`);
  lines.push(`Schema of ${kind}:`, jsonLine(message.schema));
  return lines.join('\n');
}

/** The reference of a top-level property of a kind, or undefined for a key no path can write (VAR-1). */
function slotReference(kind: string, name: string): string | undefined {
  try {
    return formatReference(kind, [name]);
  } catch {
    return undefined;
  }
}
