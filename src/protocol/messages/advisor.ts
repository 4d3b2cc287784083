/** The `advisor` message (ADV-1 to ADV-8): a lens the model adopts, writing a structured opinion before it acts. */
import { CONSULT_ACTIVITY, CONSULT_TOOL, Council, opinionSchema } from './advisors.js';
import { instanceNames } from './data-messages.js';
import { defineHandler, type DocumentProblem } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { pointer } from '../json.js';
import { parseReference } from '../variables/references.js';
import { schemaProblem } from '../schemas.js';
import { metaConst } from '../tools/tools.js';
import { isJsonObject, type BaseMessage, type JsonSchema, type ToolSchema, type AdvisorMessage } from '../types.js';
import { messageSchema } from './message-schema.js';

/** Properties an opinion holds whatever the advisor's schema (ADV-3): its schema may not declare them. */
const RESERVED_PROPERTIES = ['id', 'calls', '_instance'];

function schemaProblems(schema: Record<string, unknown>): MessageProblem[] {
  const problem = schemaProblem(schema);
  if (problem) return [{ pointer: '/schema', message: problem }];
  const problems: MessageProblem[] = [];
  if (schema.type !== undefined && schema.type !== 'object') {
    problems.push({
      pointer: '/schema/type',
      message: `Expected an advisor's schema to describe an object (its opinion), got type ${JSON.stringify(schema.type)}.`,
    });
  }
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  for (const name of RESERVED_PROPERTIES) {
    if (Object.hasOwn(properties, name)) {
      problems.push({
        pointer: pointer('schema', 'properties', name),
        message: `Expected an advisor's schema not to declare "${name}": every opinion has id, calls (its vote) and, when instanced, _instance already.`,
      });
    }
  }
  return problems;
}

function scopeProblems(scopes: readonly string[]): MessageProblem[] {
  return scopes.flatMap((scope, index) =>
    parseReference(scope.startsWith('†') ? scope : `†${scope}`) === undefined
      ? [{ pointer: `/scopes/${index}`, message: `Expected a context key such as "state", "input" or "†state.history", got "${scope}".` }]
      : [],
  );
}

/** The advisor id an opinion schema fixes. */
function opinionId(schema: JsonSchema): unknown {
  return isJsonObject(schema) && isJsonObject(schema.properties) && isJsonObject(schema.properties.id) ? schema.properties.id.const : undefined;
}

function isAdvisor(message: BaseMessage): message is AdvisorMessage {
  return message.type === 'advisor';
}

/** True for an advisor that speaks only when consulted (ADV-8). */
function onDemand(advisor: AdvisorMessage): boolean {
  return advisor.on === null || advisor.on === undefined;
}

/**
 * The consult tool with `advisor` added (ADV-8): its `opinion` is any one on-demand advisor's
 * opinion; it runs the built-in consult Activity, which sees the tool messages (to judge votes).
 */
function consultTool(advisor: AdvisorMessage, previous: ToolSchema | undefined): ToolSchema {
  const ours = previous !== undefined && metaConst(previous, '_activity') === CONSULT_ACTIVITY ? previous : undefined;
  const earlier = ours?.properties?.opinion;
  const branches = isJsonObject(earlier) && Array.isArray(earlier.anyOf) ? (earlier.anyOf as JsonSchema[]) : [];
  const built = opinionSchema(advisor, []);
  const opinions = [...branches.filter((branch) => opinionId(branch) !== advisor.id), built.schema];
  const definitions = { ...(isJsonObject(ours?.$defs) ? (ours.$defs as Record<string, JsonSchema>) : {}), ...built.definitions };
  return {
    type: 'object',
    description: `Consults an on-demand advisor (${opinions.map(opinionId).join(', ')}): adopt its role and write its opinion, shaped by its schema, as opinion; for one instance, give the call's _instance. The opinion is kept at †advisors.<id> and shown to you from the next step on.`,
    properties: {
      opinion: { anyOf: opinions },
      _activity: { const: CONSULT_ACTIVITY },
      _scopes: { const: ['tool'] },
    },
    required: ['opinion'],
    ...(Object.keys(definitions).length > 0 ? { $defs: definitions } : {}),
  };
}

/** The handler of `advisor`. */
export const advisorHandler = defineHandler<AdvisorMessage>({
  type: 'advisor',
  schema: messageSchema('advisor'),
  check(message) {
    return [...(message.schema === undefined ? [] : schemaProblems(message.schema)), ...scopeProblems(message.scopes ?? [])];
  },
  checkAll(placed) {
    const first = new Map<string, string>();
    const problems: DocumentProblem[] = [];
    for (const { message, at } of placed) {
      const earlier = first.get(message.id);
      if (earlier === undefined) first.set(message.id, at);
      else
        problems.push({
          pointer: `${at}/id`,
          message: `Expected each advisor to have its own id: "${message.id}" is also the id of the advisor at ${earlier}.`,
        });
    }
    return problems;
  },
  tools(message, defined): Record<string, ToolSchema> {
    return onDemand(message) ? { [CONSULT_TOOL]: consultTool(message, defined.get(CONSULT_TOOL)) } : {};
  },
  render(message, state) {
    // The advisors speak as one council: the first of them renders it, for all (ADV-5, ADV-7); the
    // others stop at the first, so the context is gathered once a step, not once an advisor.
    const first = state.context.find(isAdvisor);
    if (first !== undefined && first !== message) return;
    const advisors = first === undefined ? [message] : state.context.filter(isAdvisor);
    const council = new Council(advisors, state.step, state.instances ?? instanceNames(state.context), [...state.tools.keys()]);
    state.instructions.push(council.instruction());
    const part = council.solutionPart();
    if (!part) return;
    // Opinions come first in the answer, before everything else it writes (ADV-5).
    state.solutionProperties = { advisors: part.schema, ...state.solutionProperties };
    Object.assign(state.solutionDefinitions, part.definitions);
    if (council.required > 0) state.solutionRequired.push('advisors');
    state.answerChecks.push(council.check);
  },
});
