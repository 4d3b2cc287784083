/** The `meta` message (MSG-6, MSG-17): the identity and version of what the answer updates, offered back as the Solution's `meta`. */
import { defineHandler } from '../handlers.js';
import type { BaseMessage } from '../types.js';
import { foldFlat } from './flat-shorthand.js';
import { messageSchema } from './message-schema.js';
import { jsonBlock, pushUser } from './render-blocks.js';

/** Identity/version of what is being updated. */
export interface MetaMessage extends BaseMessage {
  type: 'meta';
  meta: Record<string, unknown>;
}

/** The handler of `meta`. */
export const metaHandler = defineHandler<MetaMessage>({
  type: 'meta',
  schema: messageSchema('meta'),
  normalize: (message) => foldFlat(message, 'meta', ['type']),
  render(message, state) {
    pushUser(state, `## Meta\n${jsonBlock(message.meta)}`);
    state.solutionProperties.meta = { type: 'object', description: 'Identity and version of what this answer updates.' };
  },
});
