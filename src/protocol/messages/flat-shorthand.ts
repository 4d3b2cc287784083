/** The flat shorthand of input, state and meta: fields written beside `type` are the value (MSG-6). */
import type { BaseMessage } from '../types.js';

/**
 * Moves every field but the reserved ones into `field`; a message that has `field` already, or
 * nothing to move, is left as it is. Keys are copied as entries, so `__proto__` stays a data key.
 */
export function foldFlat(message: BaseMessage, field: string, reserved: readonly string[]): BaseMessage {
  if (field in message) return message;
  const entries = Object.entries(message);
  const kept = Object.fromEntries(entries.filter(([key]) => reserved.includes(key)));
  const folded = Object.fromEntries(entries.filter(([key]) => !reserved.includes(key)));
  if (Object.keys(folded).length === 0) return { ...kept, type: message.type };
  return { ...kept, type: message.type, [field]: folded };
}
