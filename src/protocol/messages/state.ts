/** The `state` message (MSG-6, MSG-12): the workflow's scratchpad, data of kind `state`. */
import { recordFor } from '../data-records.js';
import { defineHandler } from '../handlers.js';
import type { BaseMessage, JsonSchema } from '../types.js';
import { DATA_LIKE_FIELDS, declaredSchemaProblems } from './data-like.js';
import { foldFlat } from './flat-shorthand.js';
import { messageSchema } from './message-schema.js';
import { pushUser, renderDataBlock } from './render-blocks.js';

/** The workflow's scratchpad; a data message of kind `state`. */
export interface StateMessage extends BaseMessage {
  type: 'state';
  state: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** The handler of `state`. */
export const stateHandler = defineHandler<StateMessage>({
  type: 'state',
  schema: messageSchema('state'),
  normalize: (message) => foldFlat(message, 'state', DATA_LIKE_FIELDS),
  check: declaredSchemaProblems,
  render(message, state) {
    pushUser(state, renderDataBlock('state', message.state, message));
  },
  data: {
    kind: 'state',
    kindOf: () => 'state',
    record: (message) => recordFor('state', message.state, message),
    show: (_kind, view, fields) => (view.found ? { type: 'state', state: view.value, ...fields } : undefined),
  },
});
