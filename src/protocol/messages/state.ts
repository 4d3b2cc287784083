/** The `state` message (MSG-6, MSG-12, MSG-19): the workflow's scratchpad, data of kind `state`; one holding only a `schema` declares its intended shape. */
import type { StateMessage } from '../types.js';
import { ownKindHandler } from './data-like.js';
import { pushUser, renderDataBlock, renderIntendedShape } from './render-blocks.js';

/** The handler of `state`. */
export const stateHandler = ownKindHandler<StateMessage>('state', {
  render(message, state) {
    pushUser(state, 'state' in message ? renderDataBlock('state', message.state, message) : renderIntendedShape('state', message));
  },
  // Nothing written yet: the schema alone still shows, as the shape the state is meant to take.
  show: (_kind, view, fields) =>
    view.found ? { type: 'state', state: view.value, ...fields } : fields.schema === undefined ? undefined : { type: 'state', ...fields },
});
