/** The `data` message (MSG-5, MSG-12): a value of a named kind, the one data-like type whose kind each message chooses; every write is one. */
import { recordFor } from '../data-records.js';
import { defineHandler } from '../handlers.js';
import type { BaseMessage, Call, JsonSchema, OutputMethod } from '../types.js';
import { declaredSchemaProblems } from './data-like.js';
import { messageSchema } from './message-schema.js';
import { pushUser, renderDataBlock } from './render-blocks.js';

/**
 * Structured context. `kind` plus `_instance` is its identity. Writes made by calls carry `_path`
 * (where below the kind the value goes), `_outputMethod`, `_call` and `_date`; messages written in
 * a document have none of these and merge deeply into their identity's view.
 */
export interface DataMessage extends BaseMessage {
  type: 'data';
  kind: string;
  data: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
  _path?: string;
  _outputMethod?: OutputMethod;
  /** The call that wrote this message, as written (act 008, PLAN-10); a string is the older form, the call's id. */
  _call?: Call | string;
  _date?: string;
}

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
