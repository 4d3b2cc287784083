/**
 * The providers' documented request rules, checked on captured wire bodies the way the real APIs
 * refuse them: each broken rule in the provider's own wording (OpenAI's structured-output
 * limits and strict subset; Anthropic's strict tools and message rules).
 */
import { isJsonObject } from '../../../src/protocol/types.js';
import { json, type Handler } from './loopback.js';
import { openAIError } from './openai-wire.js';
import { anthropicError } from './anthropic-wire.js';

type Node = Record<string, unknown>;

/** Keywords OpenAI's strict mode accepts. */
const OPENAI_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'format',
  'pattern',
]);
const OPENAI_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** Keywords Anthropic's strict tools accept. */
const ANTHROPIC_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'allOf',
  'enum',
  'const',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'minItems',
  'format',
  'pattern',
  'default',
]);
const ANTHROPIC_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions']);

/** Every schema node of a schema with its context (the keys leading to it), maps of schemas entered by name. */
function nodes(schema: unknown): Array<{ node: Node; context: string[]; objectDepth: number }> {
  const found: Array<{ node: Node; context: string[]; objectDepth: number }> = [];
  const visit = (node: unknown, context: string[], objectDepth: number): void => {
    if (!isJsonObject(node)) return;
    found.push({ node, context, objectDepth });
    const depth = isJsonObject(node.properties) ? objectDepth + 1 : objectDepth;
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_MAPS.has(key) && isJsonObject(value)) {
        for (const [name, child] of Object.entries(value)) visit(child, [...context, key, name], key === 'properties' ? depth : 0);
      } else if ((key === 'anyOf' || key === 'allOf' || key === 'oneOf') && Array.isArray(value)) {
        value.forEach((child, index) => {
          visit(child, [...context, key, String(index)], objectDepth);
        });
      } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
        visit(value, [...context, key], objectDepth);
      }
    }
  };
  visit(schema, [], 0);
  return found;
}

const contextOf = (context: string[]) => `context=(${context.map((key) => `'${key}'`).join(', ')}${context.length === 1 ? ',' : ''})`;

/** The rules a strict OpenAI `json_schema` breaks, in OpenAI's words ("Invalid schema for response_format 'solution': …"). */
export function openAIStrictViolations(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isJsonObject(schema) || schema.type !== 'object' || schema.anyOf !== undefined) {
    problems.push(`schema must be a JSON Schema of 'type: "object"', got 'type: "${isJsonObject(schema) ? String(schema.type) : typeof schema}"'.`);
  }
  let properties = 0;
  let enumValues = 0;
  let characters = 0;
  for (const { node, context, objectDepth } of nodes(schema)) {
    const where = `In ${contextOf(context)}`;
    for (const keyword of Object.keys(node)) if (!OPENAI_KEYWORDS.has(keyword)) problems.push(`${where}, '${keyword}' is not permitted.`);
    if (node.$ref !== undefined) {
      const siblings = Object.keys(node).filter((keyword) => keyword !== '$ref');
      if (siblings.length > 0) problems.push(`${where}, $ref cannot have keywords {${siblings.map((keyword) => `'${keyword}'`).join(', ')}}.`);
    }
    if (typeof node.format === 'string' && !OPENAI_FORMATS.has(node.format)) problems.push(`${where}, '${node.format}' is not a valid format.`);
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('object') || node.properties !== undefined) {
      if (node.additionalProperties !== false) problems.push(`${where}, 'additionalProperties' is required to be supplied and to be false.`);
      const names = isJsonObject(node.properties) ? Object.keys(node.properties) : [];
      const required = Array.isArray(node.required) ? node.required : [];
      const missing = names.filter((name) => !required.includes(name));
      if (missing.length > 0 || !Array.isArray(node.required)) {
        problems.push(`${where}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0] ?? ''}'.`);
      }
      properties += names.length;
      characters += names.reduce((sum, name) => sum + name.length, 0);
    }
    if (types.includes('array') && node.items === undefined) problems.push(`${where}, array schema missing items.`);
    if (node.type === undefined && node.anyOf === undefined && node.$ref === undefined && node.enum === undefined && node.const === undefined) {
      problems.push(`${where}, schema must have a 'type' key.`);
    }
    if (objectDepth > 10) problems.push(`${where}, too many levels of nesting: at most 10 are allowed.`);
    const values = Array.isArray(node.enum) ? node.enum : node.const !== undefined ? [node.const] : [];
    if (Array.isArray(node.enum)) {
      enumValues += node.enum.length;
      const text = node.enum.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : 0), 0);
      if (node.enum.length > 250 && text > 15_000) {
        problems.push(
          `${where}, enum has ${node.enum.length} values with a total string length of ${text}: at most 15000 characters are allowed when an enum has more than 250 values.`,
        );
      }
    }
    characters += values.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : JSON.stringify(value).length), 0);
  }
  if (properties > 5000) problems.push(`The schema has ${properties} object properties: at most 5000 are allowed.`);
  if (enumValues > 1000) problems.push(`The schema has ${enumValues} enum values: at most 1000 are allowed.`);
  if (characters > 120_000)
    problems.push(`The total string length of property names, definition names, enum values and const values is ${characters}: at most 120000 are allowed.`);
  return problems.map((problem) => `Invalid schema for response_format 'solution': ${problem}`);
}

/** The rules an OpenAI chat-completions body breaks. */
export function openAIViolations(body: Node): string[] {
  const format = body.response_format;
  if (!isJsonObject(format) || format.type !== 'json_schema' || !isJsonObject(format.json_schema)) return [];
  const problems: string[] = [];
  const named = format.json_schema;
  if (typeof named.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(named.name)) problems.push("Invalid 'response_format.json_schema.name'.");
  if (named.strict === true) problems.push(...openAIStrictViolations(named.schema));
  return problems;
}

/** Whether an OpenAI body asks for strict structured output. */
export function openAIStrict(body: Node): boolean {
  const format = body.response_format;
  return isJsonObject(format) && isJsonObject(format.json_schema) && format.json_schema.strict === true;
}

/** The local references that reach themselves again (recursive schemas). */
function recursive(schema: Node): string[] {
  const refsIn = (node: unknown, found: string[] = []): string[] => {
    if (Array.isArray(node)) for (const item of node) refsIn(item, found);
    else if (isJsonObject(node))
      for (const [key, value] of Object.entries(node)) key === '$ref' && typeof value === 'string' ? found.push(value) : refsIn(value, found);
    return found;
  };
  const resolve = (ref: string): unknown => {
    let node: unknown = schema;
    for (const part of ref.replace(/^#\/?/, '').split('/').filter(Boolean))
      node = isJsonObject(node) ? node[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
    return node;
  };
  return [...new Set(refsIn(schema))].filter((start) => {
    const seen = new Set<string>();
    const queue = refsIn(resolve(start));
    while (queue.length > 0) {
      const ref = queue.pop() as string;
      if (ref === start) return true;
      if (seen.has(ref)) continue;
      seen.add(ref);
      queue.push(...refsIn(resolve(ref)));
    }
    return false;
  });
}

/** The rules a strict Anthropic tool's `input_schema` breaks, in Anthropic's words. */
export function anthropicStrictViolations(schema: unknown, index: number): string[] {
  const problems: string[] = [];
  if (!isJsonObject(schema)) return [`tools.${index}.custom.input_schema: Input should be a valid dictionary`];
  let optional = 0;
  let unions = 0;
  for (const { node, context } of nodes(schema)) {
    const where = `tools.${index}.custom.input_schema${context.length > 0 ? `.${context.join('.')}` : ''}`;
    for (const keyword of Object.keys(node)) if (!ANTHROPIC_KEYWORDS.has(keyword)) problems.push(`${where}: '${keyword}' is not supported with strict: true`);
    if (node.minItems !== undefined && node.minItems !== 0 && node.minItems !== 1)
      problems.push(`${where}: minItems values other than 0 or 1 are not supported`);
    if (typeof node.format === 'string' && !ANTHROPIC_FORMATS.has(node.format)) problems.push(`${where}: format '${node.format}' is not supported`);
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('object') || node.properties !== undefined) {
      if (node.additionalProperties !== false) problems.push(`${where}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
      const names = isJsonObject(node.properties) ? Object.keys(node.properties) : [];
      const required = Array.isArray(node.required) ? node.required : [];
      optional += names.filter((name) => !required.includes(name)).length;
      for (const name of names) {
        const property = (node.properties as Node)[name];
        if (isJsonObject(property) && (Array.isArray(property.anyOf) || Array.isArray(property.type))) unions += 1;
      }
    }
    if (Array.isArray(node.enum) && node.enum.some((value) => value !== null && typeof value === 'object'))
      problems.push(`${where}: enum values must be primitives`);
  }
  for (const ref of recursive(schema)) problems.push(`tools.${index}.custom.input_schema: recursive schemas are not supported ($ref ${ref})`);
  if (optional > 24)
    problems.push(
      `Schemas contains too many optional parameters (${optional}), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: 24).`,
    );
  if (unions > 16)
    problems.push(`Schemas contains too many parameters with union types (${unions}). Reduce the number of parameters with union types (limit: 16).`);
  return problems;
}

/** The rules an Anthropic messages body breaks. */
export function anthropicViolations(body: Node): string[] {
  const problems: string[] = [];
  if (typeof body.max_tokens !== 'number') problems.push('max_tokens: Field required');
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.filter((tool) => isJsonObject(tool) && tool.strict === true).length > 20) problems.push('tools: at most 20 strict tools are allowed');
  tools.forEach((tool, index) => {
    if (!isJsonObject(tool)) return;
    if (!isJsonObject(tool.input_schema) || tool.input_schema.type !== 'object')
      problems.push(`tools.${index}.custom.input_schema.type: Input should be 'object'`);
    if (tool.strict === true) problems.push(...anthropicStrictViolations(tool.input_schema, index));
  });
  const system = Array.isArray(body.system) ? body.system : [];
  system.forEach((block, index) => {
    if (isJsonObject(block) && block.type === 'text' && block.text === '') problems.push(`system.${index}: text content blocks must be non-empty`);
  });
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0 || !isJsonObject(messages[0]) || messages[0].role !== 'user') problems.push('messages: the first message must use the "user" role');
  messages.forEach((message, index) => {
    if (!isJsonObject(message)) return;
    const last = index === messages.length - 1 && message.role === 'assistant';
    if (message.content === '' && !last)
      problems.push(`messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
    if (Array.isArray(message.content)) {
      message.content.forEach((block, blockIndex) => {
        if (isJsonObject(block) && block.type === 'text' && block.text === '')
          problems.push(`messages.${index}.content.${blockIndex}: text content blocks must be non-empty`);
      });
    }
  });
  return problems;
}

/** Whether an Anthropic body's solution tool is strict. */
export function anthropicStrict(body: Node): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool) => isJsonObject(tool) && tool.name === 'solution' && tool.strict === true);
}

/** A captured body, the provider whose API it was sent to, and the rules it broke. */
export interface Captured {
  provider: 'openai' | 'anthropic';
  body: Node;
  violations: string[];
}

/**
 * A handler speaking both APIs (by path) that captures each body, answers 400 in the provider's
 * words when it breaks a rule (as the real API would), and otherwise ends the run with a 401 (no
 * retry, no re-ask).
 */
export function ruleChecking(captured: () => Captured[]): Handler {
  return (request, response) => {
    const body = request.body as Node;
    const provider = request.path.endsWith('/messages') ? 'anthropic' : 'openai';
    const violations = provider === 'openai' ? openAIViolations(body) : anthropicViolations(body);
    captured().push({ provider, body, violations });
    if (violations.length > 0) {
      const refusal = provider === 'openai' ? openAIError(400, violations.join('\n')) : anthropicError(400, violations.join('\n'));
      return refusal(request, response);
    }
    const stop =
      provider === 'openai'
        ? { error: { message: 'captured', type: 'invalid_request_error' } }
        : { type: 'error', error: { type: 'authentication_error', message: 'captured' } };
    return json(401, stop)(request, response);
  };
}
