/** The `input` message (MSG-6, MSG-13, DOC-6): the Request's structured prompt, data of kind `input`; one without `input` is a template slot declaring its schema. */
import { InputError } from '../errors.js';
import type { LoadedRequest } from './load-request.js';
import type { JsonSchema, Message, RequestDocument, InputMessage } from '../types.js';
import { ANNOTATION_KEYWORDS, validateAgainst } from '../schemas.js';
import { ownKindHandler } from './data-like.js';
import { jsonLine, pushUser } from './render-blocks.js';

/** What `annotated` found for each schema object asked about: a document's schemas are frozen (DEL-29), so each is walked once. */
const annotatedSchemas = new WeakMap<object, boolean>();

/** True when a schema has an annotation keyword anywhere inside (a property named like one is no annotation). */
function annotated(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || !Object.isFrozen(schema)) return walkAnnotated(schema);
  let found = annotatedSchemas.get(schema);
  if (found === undefined) {
    found = walkAnnotated(schema);
    annotatedSchemas.set(schema, found);
  }
  return found;
}

function walkAnnotated(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(annotated);
  if (typeof schema !== 'object' || schema === null) return false;
  return Object.entries(schema).some(([key, value]) =>
    key === 'properties' || key === '$defs' || key === 'definitions' || key === 'patternProperties'
      ? typeof value === 'object' && value !== null && Object.values(value).some(annotated)
      : ANNOTATION_KEYWORDS.has(key) || annotated(value),
  );
}

/** True when the given values match the schema and the schema adds nothing they do not show (MSG-25). */
function shownByValues(schema: JsonSchema, values: unknown): boolean {
  return !annotated(schema) && namesTheValues(schema, values) && validateAgainst(schema, values).length === 0;
}

/** Keywords that make a schema say more than one shape: the values alone cannot show which (MSG-25). */
const COMPOSITION_KEYWORDS = ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'not'];

/**
 * True when, wherever the values reach, the schema names exactly the properties they have (MSG-25):
 * a property the schema names and the values lack — or the reverse — is a mapping the model must
 * make (act 014, "Flexible Input Mapping at Execution Time"), whether or not the values validate.
 */
function namesTheValues(schema: unknown, values: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return true;
  if (COMPOSITION_KEYWORDS.some((keyword) => keyword in schema)) return false;
  const { properties, items } = schema as { properties?: unknown; items?: unknown };
  if (Array.isArray(values)) return values.every((item) => namesTheValues(items, item));
  // A schema naming no properties says only the values' type, which they show.
  if (typeof values !== 'object' || values === null || typeof properties !== 'object' || properties === null) return true;
  const named = properties as Record<string, unknown>;
  const given = Object.entries(values);
  return given.length === Object.keys(named).length && given.every(([key, value]) => Object.hasOwn(named, key) && namesTheValues(named[key], value));
}

/** True for a template slot: an input message that gives no values, only (perhaps) their schema. */
function isTemplateSlot(message: Message): message is InputMessage {
  return message.type === 'input' && message.input === undefined;
}

/** Message types beside which an input is the prompt's only block (MSG-33): system turns, tools, and the input's own messages. */
const BESIDE_LONE_INPUT: ReadonlySet<string> = new Set(['system', 'tool', 'input']);

/** True when the context holds nothing but system turns, tools and inputs of no instance: the input is all the prompt shows (MSG-33). */
function isLoneInput(context: readonly Message[]): boolean {
  return context.every((message) => BESIDE_LONE_INPUT.has(message.type) && (message.type !== 'input' || (message as InputMessage)._instance === undefined));
}

/** The handler of `input`. */
export const inputHandler = ownKindHandler<InputMessage>('input', {
  render(message, state) {
    if (!('input' in message)) return;
    // Values that already match a schema saying nothing but their shape need no schema beside them (MSG-25).
    const valuesAlone = message.schema === undefined || shownByValues(message.schema, message.input);
    // Nor a heading, when nothing else in the prompt is to be told from them (MSG-33).
    if (valuesAlone && message._instance === undefined && message.description === undefined && isLoneInput(state.context)) {
      pushUser(state, jsonLine(message.input));
      return;
    }
    const instance = typeof message._instance === 'string' ? ` (instance "${message._instance}")` : '';
    const lines = [`## Input${instance}`];
    if (typeof message.description === 'string') lines.push(message.description);
    if (valuesAlone) lines.push(jsonLine(message.input));
    else {
      lines.push('These are the values this Request was given:', jsonLine(message.input));
      lines.push('The input this Request expects follows this schema (map the given values onto it where they differ):', jsonLine(message.schema));
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

/**
 * Checks the input given to a run from outside its run tree against the Request's declared input
 * schema (DATA-11), before anything runs; throws an InputError listing every problem with its
 * pointer. No input given is a problem only when the schema requires properties: each is named.
 * A Request that declares no input schema takes any input.
 */
export function checkGivenInput(loaded: LoadedRequest, input: unknown): void {
  const schema = declaredInputSchema(loaded.document);
  if (schema === undefined) return;
  const issues =
    input === undefined
      ? requiredOf(schema).map((name) => ({ pointer: '', message: `Expected property "${name}" to be present: no input was given.` }))
      : validateAgainst(schema, input);
  if (issues.length > 0) throw new InputError(loaded, issues);
}

/** The properties a schema requires at its top level. */
function requiredOf(schema: JsonSchema): string[] {
  if (typeof schema !== 'object' || !Array.isArray(schema.required)) return [];
  return schema.required.filter((name): name is string => typeof name === 'string');
}

/** The message that gives a run its input (`runtime.run(…, { input })`), with the schema the Request declares. */
export function givenInput(document: RequestDocument, input: unknown): InputMessage {
  const schema = declaredInputSchema(document);
  return { type: 'input', input, ...(schema === undefined ? {} : { schema }) };
}
