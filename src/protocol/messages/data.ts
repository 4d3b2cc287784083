/** The `data` message (MSG-5, MSG-12): a value of a named kind, the one data-like type whose kind each message chooses; every write is one. */
import { recordFor } from '../variables/data-records.js';
import { defineHandler } from './handlers.js';
import type { DataMessage } from '../types.js';
import { declaredSchemaProblems } from './data-like.js';
import { messageSchema } from './message-schema.js';
import { pushUser, renderDataBlock } from './render-blocks.js';

/** The kind of a data message: its `kind`, else `data`. */
function kindOf(message: DataMessage): string {
  return typeof message.kind === 'string' ? message.kind : 'data';
}

/** The handler of `data`. */
export const dataHandler = defineHandler<DataMessage>({
  type: 'data',
  schema: messageSchema('data'),
  normalize: (message) => ({ ...message, kind: message.kind ?? 'data' }),
  check: declaredSchemaProblems,
  render(message, state) {
    pushUser(state, renderDataBlock(message.kind, message.data, message));
  },
  data: {
    kindOf,
    record: (message) => recordFor(kindOf(message), message.data, message),
    show: (kind, view, fields) => (view.found ? { type: 'data', kind, data: view.value, ...fields } : undefined),
  },
});
