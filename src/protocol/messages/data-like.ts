/** What the data-like types (data, input, state) share: the fields their shorthand keeps, and a declared schema that must compile. */
import type { MessageProblem } from '../handlers.js';
import { schemaProblem } from '../schemas.js';
import type { BaseMessage } from '../types.js';

/** The fields the flat shorthand of input and state leaves beside the value (MSG-6), the record's `_call` and `_date` among them (PLAN-10). */
export const DATA_LIKE_FIELDS: readonly string[] = ['type', 'schema', 'description', '_instance', '_call', '_date'];

/** The problem of a declared `schema` that does not compile, at `/schema`. */
export function declaredSchemaProblems(message: BaseMessage): MessageProblem[] {
  if (message.schema === undefined) return [];
  const problem = schemaProblem(message.schema);
  return problem ? [{ pointer: '/schema', message: problem }] : [];
}
