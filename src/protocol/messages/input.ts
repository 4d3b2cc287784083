/** The `input` message (MSG-6, MSG-13, DOC-6): the Request's structured prompt, data of kind `input`; one without `input` is a template slot declaring its schema. */
import type { JsonSchema, Message, RequestDocument, BaseMessage } from '../types.js';
import { ownKindHandler } from './data-like.js';
import { jsonBlock, pushUser } from './render-blocks.js';

/** The Request's structured prompt; a data message of kind `input`. No `input` = a template slot. */
export interface InputMessage extends BaseMessage {
  type: 'input';
  input?: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** True for a template slot: an input message that gives no values, only (perhaps) their schema. */
function isTemplateSlot(message: Message): message is InputMessage {
  return message.type === 'input' && message.input === undefined;
}

/** The handler of `input`. */
export const inputHandler = ownKindHandler<InputMessage>('input', {
  render(message, state) {
    if (!('input' in message)) return;
    const instance = typeof message._instance === 'string' ? ` (instance "${message._instance}")` : '';
    const lines = [`## Input${instance}`];
    if (typeof message.description === 'string') lines.push(message.description);
    lines.push('These are the values this Request was given:', jsonBlock(message.input));
    if (message.schema !== undefined) {
      lines.push('The input this Request expects follows this schema (map the given values onto it where they differ):', jsonBlock(message.schema));
    }
    pushUser(state, lines.join('\n'));
  },
  // A slot with nothing given still shows its schema: it tells what is expected.
  show: (_kind, view, fields) => (view.found ? { type: 'input', input: view.value, ...fields } : { type: 'input', ...fields }),
});

/**
 * The input schema a Request declares: the schema of its first template slot that has one. The
 * run's given input is shown with it, and the server's catalog lists it.
 */
export function declaredInputSchema(document: RequestDocument): JsonSchema | undefined {
  return document.context.filter(isTemplateSlot).find((slot) => slot.schema !== undefined)?.schema;
}

/** The message that gives a run its input (`runtime.run(…, { input })`), with the schema the Request declares. */
export function givenInput(document: RequestDocument, input: unknown): InputMessage {
  const schema = declaredInputSchema(document);
  return { type: 'input', input, ...(schema === undefined ? {} : { schema }) };
}
