/** What the data-like types (data, input, state) share: the fields their shorthand keeps, a declared schema that must compile, and the handler of a type that holds one kind. */
import { recordFor } from '../variables/data-records.js';
import { defineHandler, type DataSemantics, type MessageHandler } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { schemaProblem } from '../schemas.js';
import type { BaseMessage } from '../types.js';
import { foldFlat } from './flat-shorthand.js';
import { messageSchema } from './message-schema.js';

/** The fields the flat shorthand of input and state leaves beside the value (MSG-6), the record's `_call` and `_date` among them (PLAN-10). */
export const DATA_LIKE_FIELDS: readonly string[] = ['type', 'schema', 'description', '_instance', '_call', '_date'];

/** The problem of a declared `schema` that does not compile, at `/schema`. */
export function declaredSchemaProblems(message: BaseMessage): MessageProblem[] {
  if (message.schema === undefined) return [];
  const problem = schemaProblem(message.schema);
  return problem ? [{ pointer: '/schema', message: problem }] : [];
}

/**
 * The handler of a type whose messages always hold the kind of its name, their value in the field
 * of that name (`input`, `state`): its canonical shape, its flat shorthand (MSG-6), its declared
 * schema checked, and a record for each message that holds a value. One without a value (a
 * template slot, an intended shape, MSG-19) holds no record: reads find nothing until a call writes.
 */
export function ownKindHandler<M extends BaseMessage>(
  kind: M['type'],
  parts: { render: NonNullable<MessageHandler<M>['render']>; show: DataSemantics<M>['show'] },
): MessageHandler<M> {
  return defineHandler<M>({
    type: kind,
    schema: messageSchema(kind),
    normalize: (message) => foldFlat(message, kind, DATA_LIKE_FIELDS),
    check: declaredSchemaProblems,
    render: parts.render,
    data: {
      kind,
      kindOf: () => kind,
      record: (message) => (message[kind] === undefined ? { ok: true } : recordFor(kind, message[kind], message)),
      show: parts.show,
    },
  });
}
