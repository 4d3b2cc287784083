/** Where the built-in types' canonical shapes live: `$ref`s into spec/schemas/message.schema.json. */
import type { JsonSchema } from '../types.js';

const MESSAGE_SCHEMA_ID = 'https://delegate-run.dev/schemas/message.schema.json';

/** The schema of one built-in type: a `$ref` to its definition in message.schema.json. */
export function messageSchema(definition: string): JsonSchema {
  return { $ref: `${MESSAGE_SCHEMA_ID}#/$defs/${definition}` };
}
