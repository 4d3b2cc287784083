/** Loading Request documents: parse, normalise shorthands, validate everything, report every problem with file and pointer. */
import { basename } from 'node:path';
import { delegateRegistryProblems } from '../tools/delegate-names.js';
import { RequestError, type Problem } from '../errors.js';
import type { HandlerRegistry, PlacedMessage } from './handlers.js';
import { atPointer, nestingMessage, nestingProblem, parseJson, pointer } from '../json.js';
import { nearestName } from '../nearest-name.js';
import { CONFIG_KEYS, compileSchema, describeErrors, documentSchema, schemaProblem } from '../schemas.js';
import { hasStructuredContent, unwrapContent, withType } from './turn.js';
import { isJsonObject, type BaseMessage, type Message, type RequestDocument } from '../types.js';

/** A loaded Request: the canonical document, where it came from and the name its runs carry. */
export interface LoadedRequest {
  document: RequestDocument;
  /** Absolute file path, URL, or a synthetic location such as `anonymous:<tool>`. */
  location: string;
  /** `meta.name`, else the file name without `.json`. */
  name: string;
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
  for (const problem of delegateRegistryProblems(raw.config?.delegates)) add(problem.pointer, problem.message);
  for (const problem of configKeyProblems(raw.config, handlers)) add(problem.pointer, problem.message);
  const context = raw.context.map((message, index) => normalizeMessage(message, pointer('context', index), handlers, add));
  const outputProblem = schemaProblem(raw.schema);
  if (outputProblem) add('/schema', outputProblem);
  const document: RequestDocument = {
    ...(raw.meta === undefined ? {} : { meta: raw.meta }),
    ...(raw.config === undefined ? {} : { config: raw.config }),
    context: context.filter((message): message is Message => message !== undefined),
    schema: raw.schema as RequestDocument['schema'],
  };
  if (problems.length === 0) checkSemantics(document, handlers, add);
  if (problems.length > 0) throw new RequestError(problems);
  return { document, location, name: requestName(document, location) };
}

/**
 * A `config` key neither the runtime nor a registered handler understands (DOC-3): a mistyped
 * `maxStep` would otherwise be ignored without a word. Each names the nearest understood key.
 */
function configKeyProblems(config: Record<string, unknown> | undefined, handlers: HandlerRegistry): { pointer: string; message: string }[] {
  if (config === undefined) return [];
  const understood = [...CONFIG_KEYS, ...handlers.list().flatMap((handler) => handler.configKeys ?? [])];
  return Object.keys(config)
    .filter((key) => !understood.includes(key))
    .map((key) => {
      const nearest = nearestName(key, understood);
      const hint = nearest === undefined ? `the keys understood are ${understood.join(', ')}.` : `did you mean "${nearest}"?`;
      return { pointer: pointer('config', key), message: `Unknown config key "${key}"; ${hint}` };
    });
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
  const inside = intoContent(written, at);
  if (inside !== undefined) return asWritten(written, inside);
  if (exists(written, at)) return at;
  const candidates = [
    at.replace(/^(\/context\/\d+(?:\/content)?\/tool\/[^/]+)\/properties\/(_[^/]+)\/const(?=\/|$)/, '$1/$2'),
    at.replace(/^(\/context\/\d+(?:\/content)?\/tool\/[^/]+)\/properties\/(_output)(?=\/|$)/, '$1/$2'),
    at.replace(/^(\/context\/\d+(?:\/content)?)\/(input|state|meta)(?=\/)/, '$1'),
    at.replace(/^(\/context\/\d+(?:\/content)?)\/text$/, '$1/message'),
    at.replace(/^(\/context\/\d+(?:\/content)?)\/text$/, '$1/content'),
    at.replace(/^(\/context\/\d+(?:\/content)?)\/calls(?=\/|$)/, '$1/plan'),
  ];
  const found = candidates.find((candidate) => candidate !== at && exists(written, candidate));
  if (found !== undefined) return found;
  let ancestor = at;
  while (ancestor !== '' && !exists(written, ancestor)) ancestor = ancestor.replace(/\/[^/]*$/, '');
  // A missing property is named where it belongs, below its existing parent.
  const parent = at.replace(/\/[^/]*$/, '');
  return parent === ancestor ? at : ancestor;
}

/**
 * A pointer into the message a turn's structured content holds (MSG-20), moved below that turn's
 * `content`: `/context/2/input/x` → `/context/2/content/input/x`, and the message itself to its
 * content. Undefined when `at` is not in such a message, names the turn's own `role` (or another
 * field it has), or already points into `content`.
 */
function intoContent(written: unknown, at: string): string | undefined {
  const match = /^(\/context\/\d+)(\/[^/]*)?/.exec(at);
  if (!match) return undefined;
  const [, turnAt = '', field] = match;
  const turn = atPointer(written, turnAt).value;
  if (!isJsonObject(turn) || !hasStructuredContent(withType(turn))) return undefined;
  // The turn's `type` is a turn type, never a problem once unwrapped: a `type` problem is the content's.
  if (field === '/content' || (field !== undefined && field !== '/type' && Object.hasOwn(turn, field.slice(1)))) return undefined;
  return `${turnAt}/content${at.slice(turnAt.length)}`;
}

/** Normalises and validates one message; reports problems at `at`. */
export function normalizeMessage(
  message: Record<string, unknown>,
  at: string,
  handlers: HandlerRegistry,
  add: (pointer: string, message: string) => void,
): Message | undefined {
  let typed = withType(message);
  // A turn whose content is a message is that message (MSG-20); its problems point into the turn.
  if (hasStructuredContent(typed)) {
    const unwrapped = unwrapContent(typed);
    if (!unwrapped.ok) {
      for (const problem of unwrapped.problems) add(`${at}${problem.pointer}`, problem.message);
      return undefined;
    }
    typed = unwrapped.message;
  }
  const handler = hasType(typed) ? handlers.get(typed.type) : undefined;
  if (!hasType(typed) || !handler) {
    add(`${at}/type`, `Expected a message type with a registered handler (one of ${handlers.types().join(', ')}), got "${String(typed.type)}".`);
    return undefined;
  }
  const canonical = handler.normalize ? handler.normalize(typed) : typed;
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

/** True for an object whose `type` is a string: a message a handler may be asked about. */
function hasType(message: Record<string, unknown>): message is BaseMessage {
  return typeof message.type === 'string';
}

/**
 * What the schemas cannot say, asked of each message's handler: its `check` and, for a data-like
 * message, whether its write can be read (a `_path` or `_outputMethod` problem, found here so that
 * nothing runs; VAR-12); then each type's `checkAll` over its messages together.
 */
function checkSemantics(document: RequestDocument, handlers: HandlerRegistry, add: (pointer: string, message: string) => void): void {
  document.context.forEach((message, index) => {
    const at = pointer('context', index);
    const handler = handlers.get(message.type);
    for (const problem of handler?.check?.(message) ?? []) add(`${at}${problem.pointer}`, problem.message);
    const outcome = handler?.data?.record(message);
    if (outcome && !outcome.ok) add(`${at}${outcome.problem.pointer}`, outcome.problem.message);
  });
  // Problems among the messages of one type (two advisors with one id), asked once per type.
  const byType = new Map<string, PlacedMessage[]>();
  document.context.forEach((message, index) => {
    const placed = byType.get(message.type) ?? [];
    placed.push({ message, at: pointer('context', index) });
    byType.set(message.type, placed);
  });
  for (const [type, placed] of byType) {
    for (const problem of handlers.get(type)?.checkAll?.(placed) ?? []) add(problem.pointer, problem.message);
  }
}
