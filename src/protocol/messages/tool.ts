/** The `tool` message (TOOL-1, TOOL-3, MSG-14): makes tools available; they reach the model through the Solution schema, never as text. */
import { defineHandler } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { pointer } from '../json.js';
import { normalizeTool } from '../tools/normalize-tool.js';
import { schemaProblem } from '../schemas.js';
import { outputSchemaOf } from '../tools/tools.js';
import { isJsonObject, type ToolMessage } from '../types.js';
import { messageSchema } from './message-schema.js';

/**
 * Names a document may not give a tool or a tool parameter (TOOL-1). `__proto__` is the one key a
 * plain JavaScript object cannot hold as an ordinary entry: an object literal or an assignment
 * with it sets the prototype instead, so an Activities record could not register an Activity under
 * it and code handling a call could drop the parameter. Other `Object.prototype` names
 * (`constructor`, `prototype`, `toString`) are ordinary keys and stay allowed: tools are kept in
 * maps, never looked up on plain objects.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__']);

function reservedNameProblem(what: string, name: string): string {
  return `Expected a ${what} other than "${name}": the name is reserved, because a JavaScript object takes it for its prototype rather than as a key (an Activities record or a call could not hold it).`;
}

/** The handler of `tool`. */
export const toolHandler = defineHandler<ToolMessage>({
  type: 'tool',
  schema: messageSchema('tool'),
  normalize(message) {
    const tools = message.tool;
    if (!isJsonObject(tools)) return message;
    const normalized = Object.entries(tools).map(([name, schema]) => [name, isJsonObject(schema) ? normalizeTool(schema) : schema]);
    return { ...message, tool: Object.fromEntries(normalized) };
  },
  check(message) {
    const problems: MessageProblem[] = [];
    for (const [name, tool] of Object.entries(message.tool)) {
      if (RESERVED_NAMES.has(name)) problems.push({ pointer: pointer('tool', name), message: reservedNameProblem('tool name', name) });
      for (const parameter of Object.keys(tool.properties ?? {})) {
        if (RESERVED_NAMES.has(parameter)) {
          problems.push({ pointer: pointer('tool', name, 'properties', parameter), message: reservedNameProblem('parameter name', parameter) });
        }
      }
      const problem = schemaProblem(tool);
      if (problem) problems.push({ pointer: `/tool/${name}`, message: problem });
      const output = outputSchemaOf(tool);
      if (output !== undefined) {
        const outputProblem = schemaProblem(output);
        if (outputProblem) problems.push({ pointer: `/tool/${name}/properties/_output`, message: outputProblem });
      }
    }
    return problems;
  },
});
