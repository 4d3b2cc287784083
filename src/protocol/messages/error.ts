/** The `error` message (MSG-8, MSG-16): a failed call fed back to the model; it has no shorthand. */
import { defineHandler } from './handlers.js';
import type { ErrorMessage } from '../types.js';
import { messageSchema } from './message-schema.js';
import { jsonLine, pushUser } from './render-blocks.js';

/** The handler of `error`. */
export const errorHandler = defineHandler<ErrorMessage>({
  type: 'error',
  schema: messageSchema('error'),
  render(message, state) {
    const id = typeof message.call.id === 'string' ? ` (${message.call.id})` : '';
    pushUser(
      state,
      `## Error in call ${String(message.call._tool ?? '?')}${id}\n${message.error.code}: ${message.error.message}\nThe call was:\n${jsonLine(message.call)}`,
    );
  },
});
