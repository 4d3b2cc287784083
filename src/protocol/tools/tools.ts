/** Tools: collecting tool definitions, reading meta-properties, composing the Solution schema the model sees. */
import { DELEGATE_ACTIVITY } from '../constants.js';
import type { HandlerRegistry } from '../messages/handlers.js';
import type { Call, JsonSchema, Message, ToolMessage, ToolSchema } from '../types.js';
import { isJsonObject, isMetaProperty } from '../types.js';
import { OUTPUT_METHODS } from '../variables/data-records.js';
import { ANNOTATION_KEYWORDS } from '../schemas.js';

/**
 * Every tool defined in a context, by name: those of `tool` messages and, given `handlers`, those
 * other messages offer (MSG-22). A later definition of a name wins (and moves to the end).
 */
export function collectTools(context: readonly Message[], into = new Map<string, ToolSchema>(), handlers?: HandlerRegistry): Map<string, ToolSchema> {
  for (const message of context) {
    const offered = message.type === 'tool' ? (message as ToolMessage).tool : handlers?.get(message.type)?.tools?.(message, into);
    for (const [name, schema] of Object.entries(offered ?? {})) {
      into.delete(name);
      into.set(name, schema);
    }
  }
  return into;
}

/** The schema a tool declares for a meta-property, if any. */
export function metaSchema(tool: ToolSchema, key: string): JsonSchema | undefined {
  return tool.properties?.[key];
}

/** A tool's `_output` schema, standalone: it may use the tool's own `$defs`, which it then carries along. */
export function outputSchemaOf(tool: ToolSchema): JsonSchema | undefined {
  const declared = metaSchema(tool, '_output');
  if (typeof declared !== 'object' || tool.$defs === undefined || declared.$defs !== undefined) return declared;
  return { ...declared, $defs: tool.$defs };
}

/** The value a tool fixes for a meta-property with `const`, if it does. */
export function metaConst(tool: ToolSchema, key: string): unknown {
  const schema = metaSchema(tool, key);
  return typeof schema === 'object' && schema !== null && 'const' in schema ? schema.const : undefined;
}

/**
 * Meta-properties that decide how and with what a call runs. A call may choose one only when its
 * tool declares it (a `const` fixes it, a wider schema lets the model choose): a model must never
 * reach an Activity, a delegate or parent context its tool's designer did not offer.
 */
export const TOOL_META_PROPERTIES = ['_activity', '_delegate', '_scopes', '_resolve', '_approval'] as const;

/** A meta-property's value for a call: the tool's `const`, else what the call carries if the tool lets it choose. */
export function metaValue(call: Call, tool: ToolSchema, key: string): unknown {
  const fixed = metaConst(tool, key);
  if (fixed !== undefined) return fixed;
  if ((TOOL_META_PROPERTIES as readonly string[]).includes(key) && metaSchema(tool, key) === undefined) return undefined;
  return call[key];
}

/**
 * Which Activity executes a call (TOOL-17): its `_activity`, else the Delegation Activity for a
 * `_delegate`, else one of the tool's name, else none: the call is latent.
 */
export function activityNameFor(call: Call, tool: ToolSchema, hasActivity: (name: string) => boolean): string | undefined {
  const named = metaValue(call, tool, '_activity');
  if (typeof named === 'string') return named;
  if (typeof metaValue(call, tool, '_delegate') === 'string') return DELEGATE_ACTIVITY;
  return hasActivity(call._tool) ? call._tool : undefined;
}

/** True when the tool (or call) is explicit: backed by an Activity or a delegate rather than latent. */
export function isExplicitTool(name: string, tool: ToolSchema, hasActivity: (name: string) => boolean): boolean {
  return metaSchema(tool, '_activity') !== undefined || metaSchema(tool, '_delegate') !== undefined || hasActivity(name);
}

/**
 * Meta-properties the model may write on any call, whatever the tool. What they mean is said once,
 * in the Solution instructions, not again in every tool's schema (MSG-29).
 */
function callMetaProperties(instances: readonly string[]): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {
    _reasoningForCall: { type: 'string' },
    _outputPath: { type: 'string', pattern: '^†' },
    _outputMethod: { enum: [...OUTPUT_METHODS] },
  };
  if (instances.length > 0) properties._instance = { enum: [...instances], description: 'The instance this call operates on.' };
  return properties;
}

/** The `_scopes` a latent call may carry as a focus hint (SCOPE-11): names of context, never a grant. */
const SCOPES_HINT: JsonSchema = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  description:
    'Optional focus hint: the parts of the context this call\'s result relies on, such as ["input"], ["state.user"] or ["history"]. Write it before _output and draw _output from those parts; it narrows your attention, it hides nothing and grants nothing.',
};

const REFERENCE_STRING: JsonSchema = { type: 'string', pattern: '^†', description: 'A †reference to a value in the context.' };

/** True for a schema that accepts every string, references included: `type: "string"` and nothing but annotations beside it. */
function takesAnyString(schema: JsonSchema): boolean {
  return isJsonObject(schema) && schema.type === 'string' && Object.keys(schema).every((key) => key === 'type' || ANNOTATION_KEYWORDS.has(key));
}

/**
 * The schema of one tool as the model sees it: `_tool` fixed to the name, every top-level
 * parameter also accepting a `†reference`, model-choosable meta-properties kept, fixed ones
 * hidden (the runtime fills them), `_output` kept (and required) only for latent tools, and not
 * required when `planning` (a lazy planner's answer, PLAN-7); on a latent tool that declares no
 * `_scopes`, the `_scopes` focus hint, just before `_output`.
 */
export function modelToolSchema(name: string, tool: ToolSchema, explicit: boolean, instances: readonly string[] = [], planning = false): JsonSchema {
  const { properties = {}, required = [], type: _type, ...rest } = tool;
  const shown: Record<string, JsonSchema> = { _tool: { const: name } };
  // A latent call may focus itself with _scopes (SCOPE-11), offered just before the _output it guides.
  const hinted = !explicit && properties._scopes === undefined;
  for (const [key, schema] of Object.entries(properties)) {
    if (key === '_tool') continue;
    if (key === '_output') {
      if (hinted) shown._scopes = SCOPES_HINT;
      if (!explicit) shown._output = schema;
      continue;
    }
    if (isMetaProperty(key)) {
      if (typeof schema === 'object' && schema !== null && 'const' in schema) continue;
      shown[key] = schema;
      continue;
    }
    // A parameter that takes any string takes a reference already: the alternative would say it twice (TOOL-23).
    shown[key] = takesAnyString(schema) ? schema : { anyOf: [schema, REFERENCE_STRING] };
  }
  if (hinted && shown._scopes === undefined) shown._scopes = SCOPES_HINT;
  for (const [key, schema] of Object.entries(callMetaProperties(instances))) {
    if (properties[key] === undefined) shown[key] = schema;
  }
  const requiredShown = ['_tool', ...required.filter((key) => key !== '_tool' && key !== '_output' && !isMetaProperty(key))];
  // A planner executes nothing, latent calls included: their `_output` is not asked for (PLAN-7).
  if (!explicit && !planning && properties._output !== undefined) requiredShown.push('_output');
  const hint = explicit ? undefined : latentScopeHint(tool);
  if (hint) rest.description = typeof rest.description === 'string' ? `${rest.description} ${hint}` : hint;
  return { type: 'object', ...rest, properties: shown, required: requiredShown };
}

/** For a latent tool with fixed `_scopes`: the sentence that focuses the model on that context. */
function latentScopeHint(tool: ToolSchema): string | undefined {
  const scopes = metaConst(tool, '_scopes');
  if (!Array.isArray(scopes) || scopes.length === 0) return undefined;
  return `When you write _output, rely only on: ${scopes.join(', ')}.`;
}

/**
 * The schema a call's parameters are validated against once its references are resolved: the
 * tool's own parameters and meta-properties plus the call-level meta-properties. `_output` is not
 * part of it: a latent result is checked against the tool's `_output` schema separately.
 */
export function callValidationSchema(name: string, tool: ToolSchema): JsonSchema {
  // Built once per tool: every call of it is validated against the same object (and compiled validator).
  const cached = validationSchemas.get(tool);
  if (cached?.name === name) return cached.schema;
  const schema = buildCallValidationSchema(name, tool);
  validationSchemas.set(tool, { name, schema });
  return schema;
}

const validationSchemas = new WeakMap<ToolSchema, { name: string; schema: JsonSchema }>();

function buildCallValidationSchema(name: string, tool: ToolSchema): JsonSchema {
  const { properties = {}, type: _type, ...rest } = tool;
  const checked: Record<string, JsonSchema> = { ...callMetaProperties([]), _instance: { type: 'string' }, _id: { type: 'string' } };
  for (const [key, schema] of Object.entries(properties)) {
    if (key !== '_output') checked[key] = schema;
  }
  checked._tool = { const: name };
  const required = (tool.required ?? []).filter((key) => key !== '_output');
  return { type: 'object', ...rest, properties: checked, required };
}

/**
 * Places a user schema inside the composed Solution schema. A schema with local references
 * (`#/$defs/...`, or `#` itself) would resolve them against the Solution schema's root once
 * embedded, so it moves to the root's `$defs` under `key`, its local references rewritten to point
 * there, and is embedded as a `$ref`. Schemas without local references are embedded as they are.
 */
export function embedSchema(schema: JsonSchema, key: string, definitions: Record<string, JsonSchema>): JsonSchema {
  if (typeof schema !== 'object' || !hasLocalReference(schema)) return schema;
  definitions[key] = rewriteLocalReferences(schema, `#/$defs/${key}`) as JsonSchema;
  return { $ref: `#/$defs/${key}` };
}

/** True when a schema refers to itself locally (`#`, `#/$defs/...`) anywhere inside. */
export function hasLocalReference(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasLocalReference);
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => (key === '$ref' && typeof item === 'string' && item.startsWith('#')) || hasLocalReference(item));
}

/** A schema's local references (`#`, `#/$defs/...`) rewritten to point below `base` (`#/$defs/<key>`), for a schema moved there. */
export function rewriteLocalReferences(value: unknown, base: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteLocalReferences(item, base));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' && item.startsWith('#') ? `${base}${item.slice(1)}` : rewriteLocalReferences(item, base),
    ]),
  );
}

/** What handlers add to the Solution schema besides its properties (MSG-21). */
export interface SolutionAdditions {
  /** Added properties an answer must have. */
  required?: readonly string[];
  /** Definitions the added properties refer to as `#/$defs/<name>`. */
  definitions?: Record<string, JsonSchema>;
}

/**
 * The composed Solution schema: handler-added properties first (MSG-21: what the model writes
 * before it acts, such as `advisors`), then `calls` as `anyOf` the tools and `output` nullable.
 * With no tools there is nothing to call: `calls` is left out altogether (TOOL-22), and an answer
 * stands for one with no calls.
 */
export function composeSolutionSchema(
  tools: ReadonlyMap<string, ToolSchema>,
  outputSchema: JsonSchema,
  hasActivity: (name: string) => boolean,
  extraProperties: Record<string, JsonSchema> = {},
  instances: readonly string[] = [],
  planning = false,
  additions: SolutionAdditions = {},
): JsonSchema {
  const definitions: Record<string, JsonSchema> = { ...additions.definitions };
  const toolSchemas = [...tools].map(([name, tool]) =>
    embedSchema(modelToolSchema(name, tool, isExplicitTool(name, tool, hasActivity), instances, planning), `tool_${name}`, definitions),
  );
  const calls: Record<string, JsonSchema> = toolSchemas.length > 0 ? { calls: { type: 'array', items: { anyOf: toolSchemas } } } : {};
  const output: JsonSchema = outputSchema === true ? true : { anyOf: [{ type: 'null' }, embedSchema(outputSchema, 'output', definitions)] };
  return {
    type: 'object',
    properties: { ...extraProperties, ...calls, output },
    required: [...(additions.required ?? []).filter((name) => name in extraProperties), ...Object.keys(calls), 'output'],
    additionalProperties: false,
    ...(Object.keys(definitions).length > 0 ? { $defs: definitions } : {}),
  };
}

/** True when a composed Solution schema offers calls, false for a Request without tools (TOOL-22). */
export function offersCalls(schema: JsonSchema): boolean {
  return typeof schema === 'object' && schema !== null && typeof schema.properties === 'object' && schema.properties !== null && 'calls' in schema.properties;
}

/**
 * True when a Solution schema asks for nothing but an unconstrained string `output` (MSG-28): no
 * calls, no added properties, an output schema of exactly `{"type": "string"}` (beside the `null`
 * of an unfinished answer). Such an answer is the output's text itself, so a provider may ask for
 * plain text instead of JSON; the text is never `null`, which a step without calls has no use for.
 */
export function answersInPlainText(schema: JsonSchema): boolean {
  if (!isJsonObject(schema) || !isJsonObject(schema.properties)) return false;
  const output = schema.properties.output;
  if (Object.keys(schema.properties).length !== 1 || !isJsonObject(output) || !Array.isArray(output.anyOf) || output.anyOf.length !== 2) return false;
  const [none, text] = output.anyOf;
  return onlyType(none, 'null') && onlyType(text, 'string');
}

/**
 * True when a Solution schema asks for nothing but `output` (as MSG-28 says: no calls, no added
 * properties) and `outputSchema`, the Request's output schema, is an object schema (`"type":
 * "object"`) with no alternative at its root (MSG-32): the answer may then be that object itself,
 * asked for with the output schema as the provider's structured output, and read as `{output: …}`.
 */
export function answersWithOutputObject(schema: JsonSchema, outputSchema: JsonSchema): boolean {
  if (!isJsonObject(schema) || !isJsonObject(schema.properties) || Object.keys(schema.properties).length !== 1 || !('output' in schema.properties))
    return false;
  return isJsonObject(outputSchema) && outputSchema.type === 'object' && !ROOT_ALTERNATIVES.some((keyword) => keyword in outputSchema);
}

/** Keywords that make a root schema more than one object shape (or a reference to one): no provider takes them as an answer's whole shape. */
const ROOT_ALTERNATIVES = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref', '$dynamicRef', 'enum', 'const'];

/** True for a schema that is `{"type": <type>}` and nothing more. */
function onlyType(schema: unknown, type: string): boolean {
  return isJsonObject(schema) && schema.type === type && Object.keys(schema).length === 1;
}

/**
 * An answer as the core reads it (TOOL-22): under a Solution schema without `calls`, an empty
 * `calls` the model wrote anyway (as answers recorded before TOOL-22 did) is dropped before the
 * answer is checked, and a valid answer gets `calls: []` afterwards.
 */
export function withoutEmptyCalls(answer: unknown, schema: JsonSchema): unknown {
  if (offersCalls(schema) || typeof answer !== 'object' || answer === null || Array.isArray(answer)) return answer;
  const { calls, ...rest } = answer as Record<string, unknown>;
  return Array.isArray(calls) && calls.length === 0 ? rest : answer;
}
