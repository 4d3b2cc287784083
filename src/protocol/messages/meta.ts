/** The `meta` message (MSG-6, MSG-17, MSG-23): the identity and version of what the answer updates, asked back as the Solution's `meta`. */
import { defineHandler, type AnswerCheck, type RenderState } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { formatIssues, schemaProblem, validateAgainst } from '../schemas.js';
import { embedSchema } from '../tools/tools.js';
import { isJsonObject, type JsonSchema, type MetaMessage } from '../types.js';
import { shapeOf } from '../value-shape.js';
import { foldFlat } from './flat-shorthand.js';
import { messageSchema } from './message-schema.js';
import { jsonLine, pushUser } from './render-blocks.js';

const DESCRIPTION =
  'The identity and version of what this answer produces: the meta in the context, updated (a new version for a new result). Required in the answer that ends the run.';

/** The schema the model's meta is judged by (MSG-23): the message's `schema`, else the shape of its `meta`. */
export function metaSchemaOf(message: MetaMessage): JsonSchema {
  return message.schema ?? shapeOf(message.meta);
}

/** The answer that ends the run (a non-null `output`) must carry a meta (MSG-23). */
const finishingAnswerHasMeta: AnswerCheck = (answer) =>
  answer.output === null || answer.output === undefined || isJsonObject(answer.meta)
    ? []
    : ['The answer ends the run (its output is not null) but has no meta: write meta, the identity and version of what it produces.'];

/** Adds the Solution's `meta` for the context's current meta message (its last one). */
function offerMeta(message: MetaMessage, state: RenderState): void {
  const schema = metaSchemaOf(message);
  const embedded = embedSchema(schema, 'meta', state.solutionDefinitions);
  // A `$ref` stands alone in the strict subset (MODEL-7): the description goes beside it only when it is inline.
  state.solutionProperties.meta = embedded === schema && isJsonObject(schema) ? { ...schema, description: schema.description ?? DESCRIPTION } : embedded;
  state.answerChecks.push(finishingAnswerHasMeta);
}

/** The handler of `meta`. */
export const metaHandler = defineHandler<MetaMessage>({
  type: 'meta',
  schema: messageSchema('meta'),
  normalize: (message) => foldFlat(message, 'meta', ['type']),
  check(message) {
    const problems: MessageProblem[] = [];
    if (message.schema === undefined) return problems;
    const problem = schemaProblem(message.schema);
    if (problem) return [{ pointer: '/schema', message: problem }];
    const issues = validateAgainst(message.schema, message.meta);
    if (issues.length > 0) problems.push({ pointer: '/meta', message: `Expected the meta to match its own schema: ${formatIssues(issues)}` });
    return problems;
  },
  render(message, state) {
    pushUser(state, `## Meta\n${jsonLine(message.meta)}`);
    const current = state.context.findLast((candidate) => candidate.type === 'meta');
    // Rendered without its context (a handler test), a message is its own context.
    if (current === message || current === undefined) offerMeta(message, state);
  },
});
