/** Loading Request documents: parse, normalise shorthands, validate everything, report every problem with file and pointer. */
import { basename } from 'node:path';
import { RequestError, type Problem } from './errors.js';
import type { HandlerRegistry } from './handlers.js';
import { atPointer, nestingMessage, nestingProblem, parseJson, pointer } from './json.js';
import { withType } from './normalize.js';
import { findCycle, describeCycle } from './plan-graph.js';
import { compileSchema, describeErrors, documentSchema, schemaProblem } from './schemas.js';
import { outputSchemaOf } from './tools.js';
import {
  isJsonObject,
  type Call,
  type InputMessage,
  type JsonSchema,
  type Message,
  type PlanMessage,
  type RequestDocument,
  type ToolMessage,
} from './types.js';
import { validateExpression } from './variables.js';

/** A loaded Request: the canonical document, where it came from and the name its runs carry. */
export interface LoadedRequest {
  document: RequestDocument;
  /** Absolute file path, URL, or a synthetic location such as `anonymous:<tool>`. */
  location: string;
  /** `meta.name`, else the file name without `.json`. */
  name: string;
}

/** The input schema a Request declares: the schema of its input template slot (an input message without `input`). */
export function declaredInputSchema(document: RequestDocument): JsonSchema | undefined {
  const slot = document.context.find((message): message is InputMessage => message.type === 'input' && !('input' in message) && message.schema !== undefined);
  return slot?.schema;
}

/** The name a run of a document carries: `meta.name`, else the file name without `.json`. */
export function requestName(document: RequestDocument, location: string): string {
  if (typeof document.meta?.name === 'string' && document.meta.name) return document.meta.name;
  const last = basename(location.replace(/[?#].*$/, ''));
  return last.replace(/\.json$/i, '') || location;
}

/** Parses and validates Request text from `location`; throws RequestError listing every problem. */
export function parseRequestText(text: string, location: string, handlers: HandlerRegistry): LoadedRequest {
  const parsed = parseJson(text);
  if (!parsed.ok) {
    // A value nested too deep is named by its pointer; text that is not JSON by its line and column.
    const problem =
      parsed.pointer === undefined
        ? { pointer: '', message: parsed.message, line: parsed.line, column: parsed.column }
        : { pointer: parsed.pointer, message: nestingMessage() };
    throw new RequestError([{ document: location, ...problem }]);
  }
  return validateRequest(parsed.value, location, handlers);
}

/**
 * Validates an already-parsed value as a Request document and returns it in canonical form.
 * Every message is normalised by its type's handler and validated against that handler's schema;
 * tool schemas and the output schema must compile; expressions must be well formed; plans must
 * be acyclic.
 */
export function validateRequest(input: unknown, location: string, handlers: HandlerRegistry): LoadedRequest {
  // Deeper values would overflow the walks below (DOC-10); parseJson refuses them in text already.
  const deep = nestingProblem(input);
  if (deep !== undefined) throw new RequestError([{ document: location, pointer: deep, message: nestingMessage() }]);
  const problems: Problem[] = [];
  // Problems are found in the canonical form; each pointer is translated back to the document as written.
  const add = (at: string, message: string) => problems.push({ document: location, pointer: asWritten(input, at), message });
  // Plain chat messages (`{role, content}`) get their type before the document schema requires one.
  const value = withTypes(input);
  const validateTop = documentSchema('request.schema.json');
  if (!validateTop(value)) {
    for (const issue of describeErrors(validateTop.errors)) add(issue.pointer, issue.message);
    throw new RequestError(problems);
  }
  const raw = value as { meta?: RequestDocument['meta']; config?: RequestDocument['config']; context: Record<string, unknown>[]; schema: unknown };
  const context = raw.context.map((message, index) => normalizeMessage(message, pointer('context', index), handlers, add));
  const outputProblem = schemaProblem(raw.schema);
  if (outputProblem) add('/schema', outputProblem);
  const document: RequestDocument = {
    ...(raw.meta === undefined ? {} : { meta: raw.meta }),
    ...(raw.config === undefined ? {} : { config: raw.config }),
    context: context.filter((message): message is Message => message !== undefined),
    schema: raw.schema as RequestDocument['schema'],
  };
  if (problems.length === 0) checkSemantics(document, add);
  if (problems.length > 0) throw new RequestError(problems);
  return { document, location, name: requestName(document, location) };
}

/** The document with `withType` applied to each context message that is a plain object (others are left for the schema to report). */
function withTypes(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const context = (value as { context?: unknown }).context;
  if (!Array.isArray(context)) return value;
  const typed = context.map((message: unknown) => (isJsonObject(message) ? withType(message) : message));
  return { ...value, context: typed };
}

/** True when a JSON pointer names something in `value`. */
function exists(value: unknown, at: string): boolean {
  return atPointer(value, at).found;
}

/**
 * Translates a pointer into the canonical form of a document back into the document as written:
 * undoes the shorthand moves of normalisation (a tool's top-level meta-property moved into
 * `properties` as a `const`, flat input/state/meta fields folded into one field, `message` or
 * `content` for `text`), and otherwise names the deepest part of the written document that exists.
 */
export function asWritten(written: unknown, at: string): string {
  if (exists(written, at)) return at;
  const candidates = [
    at.replace(/^(\/context\/\d+\/tool\/[^/]+)\/properties\/(_[^/]+)\/const(?=\/|$)/, '$1/$2'),
    at.replace(/^(\/context\/\d+\/tool\/[^/]+)\/properties\/(_output)(?=\/|$)/, '$1/$2'),
    at.replace(/^(\/context\/\d+)\/(input|state|meta)(?=\/)/, '$1'),
    at.replace(/^(\/context\/\d+)\/text$/, '$1/message'),
    at.replace(/^(\/context\/\d+)\/text$/, '$1/content'),
  ];
  const found = candidates.find((candidate) => candidate !== at && exists(written, candidate));
  if (found !== undefined) return found;
  let ancestor = at;
  while (ancestor !== '' && !exists(written, ancestor)) ancestor = ancestor.replace(/\/[^/]*$/, '');
  // A missing property is named where it belongs, below its existing parent.
  const parent = at.replace(/\/[^/]*$/, '');
  return parent === ancestor ? at : ancestor;
}

/** Normalises and validates one message; reports problems at `at`. */
export function normalizeMessage(
  message: Record<string, unknown>,
  at: string,
  handlers: HandlerRegistry,
  add: (pointer: string, message: string) => void,
): Message | undefined {
  const typed = withType(message);
  const handler = handlers.get(String(typed.type));
  if (!handler) {
    add(`${at}/type`, `Expected a message type with a registered handler (one of ${handlers.types().join(', ')}), got "${String(typed.type)}".`);
    return undefined;
  }
  const canonical = handler.normalize ? handler.normalize(typed) : (typed as Message);
  if (handler.schema !== undefined) {
    const validate =
      typeof handler.schema === 'object' && '$ref' in handler.schema && String(handler.schema.$ref).startsWith('https://delegate-run.dev/')
        ? documentSchema(String(handler.schema.$ref).replace('https://delegate-run.dev/schemas/', ''))
        : compileSchema(handler.schema);
    if (!validate(canonical)) {
      for (const issue of describeErrors(validate.errors, at)) add(issue.pointer, issue.message);
      return undefined;
    }
  }
  return canonical;
}

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

function checkSemantics(document: RequestDocument, add: (pointer: string, message: string) => void): void {
  document.context.forEach((message, index) => {
    const at = pointer('context', index);
    if (message.type === 'tool') {
      for (const [name, tool] of Object.entries((message as ToolMessage).tool)) {
        if (RESERVED_NAMES.has(name)) add(`${at}${pointer('tool', name)}`, reservedNameProblem('tool name', name));
        for (const parameter of Object.keys(tool.properties ?? {})) {
          if (RESERVED_NAMES.has(parameter)) add(`${at}${pointer('tool', name, 'properties', parameter)}`, reservedNameProblem('parameter name', parameter));
        }
        const problem = schemaProblem(tool);
        if (problem) add(`${at}/tool/${name}`, problem);
        const output = outputSchemaOf(tool);
        if (output !== undefined) {
          const outputProblem = schemaProblem(output);
          if (outputProblem) add(`${at}/tool/${name}/properties/_output`, outputProblem);
        }
      }
    }
    if (message.type === 'data' || message.type === 'input' || message.type === 'state') {
      const schema = (message as { schema?: unknown }).schema;
      if (schema !== undefined) {
        const problem = schemaProblem(schema);
        if (problem) add(`${at}/schema`, problem);
      }
    }
    if (message.type === 'plan') {
      const plan = message as PlanMessage;
      for (const [callIndex, call] of plan.calls.entries()) checkCallExpressions(call, `${at}/calls/${callIndex}`, add);
      const cycle = findCycle(plan.calls);
      if (cycle) add(`${at}/calls`, `Expected the plan's calls to form no cycle, but ${describeCycle(plan.calls, cycle)}.`);
    }
  });
}

function checkCallExpressions(call: Call, at: string, add: (pointer: string, message: string) => void): void {
  const visit = (value: unknown, where: string, kind: 'input' | 'output') => {
    if (typeof value === 'string') {
      const problem = validateExpression(value, kind);
      if (problem) add(where, problem);
    } else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, `${where}/${index}`, kind);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) visit(item, `${where}${pointer(key)}`, kind);
    }
  };
  for (const [key, value] of Object.entries(call)) {
    if (key === '_outputPath') visit(value, `${at}/_outputPath`, 'output');
    else visit(value, `${at}${pointer(key)}`, 'input');
  }
}
