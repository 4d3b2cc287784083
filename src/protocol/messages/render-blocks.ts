/** How messages read in the prompt: user turns holding headed blocks of JSON. */
import type { RenderState } from '../handlers.js';

/** A value as indented JSON. */
function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** A fenced JSON block of a value. */
export function jsonBlock(value: unknown): string {
  return `\`\`\`json\n${json(value)}\n\`\`\``;
}

/** Appends a user turn to the rendered messages. */
export function pushUser(state: RenderState, content: string): void {
  state.messages.push({ role: 'user', content });
}

/** Renders a merged data-like message as a readable block: heading, description, value, schema. */
export function renderDataBlock(kind: string, value: unknown, message: { description?: unknown; schema?: unknown; _instance?: unknown }): string {
  const instance = typeof message._instance === 'string' ? ` (instance "${message._instance}")` : '';
  const lines = [`## ${kind}${instance}`];
  if (typeof message.description === 'string') lines.push(message.description);
  lines.push(jsonBlock(value));
  if (message.schema !== undefined) lines.push(`Schema of ${kind}:`, jsonBlock(message.schema));
  return lines.join('\n');
}
