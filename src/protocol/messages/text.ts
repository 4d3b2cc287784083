/** The `text` message (MSG-4): text with an optional role, rendered as a user turn when it has none. */
import { defineHandler } from './handlers.js';
import type { TextMessage } from '../types.js';
import { messageSchema } from './message-schema.js';
import { normalizeTurn } from './turn.js';

/** The handler of `text`. */
export const textHandler = defineHandler<TextMessage>({
  type: 'text',
  schema: messageSchema('text'),
  normalize(message) {
    const role = message.role;
    return { ...normalizeTurn(message), ...(role === undefined ? {} : { role }) };
  },
  render(message, state) {
    state.messages.push({ role: message.role ?? 'user', content: message.text });
  },
});
