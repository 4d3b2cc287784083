/** JSON Schema validation: the project's own document schemas (spec/schemas) and users' schemas, compiled once and cached. */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import callSchema from '../../spec/schemas/call.schema.json' with { type: 'json' };
import cassetteSchema from '../../spec/schemas/cassette.schema.json' with { type: 'json' };
import messageSchema from '../../spec/schemas/message.schema.json' with { type: 'json' };
import modelsSchema from '../../spec/schemas/models.schema.json' with { type: 'json' };
import requestSchema from '../../spec/schemas/request.schema.json' with { type: 'json' };
import toolSchema from '../../spec/schemas/tool.schema.json' with { type: 'json' };
import { pointerSegment } from './json.js';
import type { JsonSchema } from './types.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module namespace.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The folder holding the JSON Schemas of every document (the single source of truth). */
export const SCHEMA_DIRECTORY = new URL('../../spec/schemas/', import.meta.url);

/**
 * Every schema of spec/schemas, imported as JSON modules rather than read from the folder, so the
 * core reads no files and a bundler can inline them (a test checks none of the folder's is missing).
 */
const DOCUMENT_SCHEMAS: readonly object[] = [callSchema, cassetteSchema, messageSchema, modelsSchema, requestSchema, toolSchema];

const SCHEMA_BASE = 'https://delegate-run.dev/schemas/';

/** The `config` keys of a Request document the runtime understands (DOC-3): those request.schema.json describes. */
export const CONFIG_KEYS: readonly string[] = Object.keys(requestSchema.properties.config.properties);

let documentAjv: Ajv2020 | undefined;

/** The ajv instance for the project's own schemas (strict), with every schema of spec/schemas added. */
function documentValidator(): Ajv2020 {
  if (documentAjv) return documentAjv;
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, ownProperties: true });
  addFormats(ajv);
  for (const schema of DOCUMENT_SCHEMAS) ajv.addSchema(schema);
  documentAjv = ajv;
  return ajv;
}

/** The compiled validator of one of the project's schemas, e.g. `request.schema.json#/$defs/x`. */
export function documentSchema(name: string): ValidateFunction {
  const ajv = documentValidator();
  const id = SCHEMA_BASE + name;
  const validate = ajv.getSchema(id);
  if (!validate) throw new Error(`No schema ${name} in spec/schemas.`);
  return validate;
}

// ownProperties: a parameter named like an inherited member (toString) is not present on {}.
const userAjv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, validateFormats: true, ownProperties: true });
addFormats(userAjv);
const byObject = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, ValidateFunction>();
const MAX_TEXT_CACHE = 512;

/**
 * Compiles a schema written by a user (an output schema, a tool's parameters, a composed Solution
 * schema). Compiled validators are cached by object identity and by content, so a schema rebuilt
 * identically every step compiles once. Throws when the schema itself is invalid.
 */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  if (typeof schema === 'boolean') return compileByText(schema);
  const cached = byObject.get(schema);
  if (cached) return cached;
  const validate = compileByText(schema);
  byObject.set(schema, validate);
  return validate;
}

function compileByText(schema: JsonSchema): ValidateFunction {
  const text = JSON.stringify(schema);
  const cached = byText.get(text);
  if (cached) return cached;
  // Schemas are compiled without their $id so that two documents may reuse one id.
  const copy = typeof schema === 'object' ? stripIds(schema) : schema;
  let validate: ValidateFunction;
  try {
    validate = userAjv.compile(copy as object | boolean);
  } finally {
    // ajv keeps every schema it compiles (a failed one too) for the life of the instance; the
    // validator works without it, so this bounded cache alone keeps them. A Solution schema is
    // composed anew each step, and a server runs for weeks.
    if (typeof copy === 'object') userAjv.removeSchema(copy);
  }
  if (byText.size >= MAX_TEXT_CACHE) byText.delete(byText.keys().next().value as string);
  byText.set(text, validate);
  return validate;
}

function stripIds(schema: Record<string, unknown>): Record<string, unknown> {
  const { $id: _ignored, $schema: _dialect, ...rest } = schema;
  return rest;
}

/** Returns a sentence describing why a schema does not compile, or undefined when it does. */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    return 'Expected a JSON Schema (an object or a boolean).';
  }
  try {
    compileSchema(schema as JsonSchema);
    return undefined;
  } catch (error) {
    return `Expected a valid JSON Schema: ${(error as Error).message}.`;
  }
}

/** One validation failure, ready to be shown with a document and pointer. */
export interface SchemaIssue {
  /** JSON pointer into the validated value. */
  pointer: string;
  message: string;
}

/** Turns ajv errors into full sentences with pointers (relative to `prefix`). */
/**
 * Issues as text for a message: `"/a must be string /b must …"` on one line, or one issue a line
 * with a colon after the pointer (`lines`), as re-asks show them to the model. The root is `/`.
 */
export function formatIssues(issues: readonly SchemaIssue[], options: { lines?: boolean } = {}): string {
  return options.lines
    ? issues.map((issue) => `${issue.pointer || '/'}: ${issue.message}`).join('\n')
    : issues.map((issue) => `${issue.pointer || '/'} ${issue.message}`).join(' ');
}

export function describeErrors(errors: ErrorObject[] | null | undefined, prefix = ''): SchemaIssue[] {
  if (!errors) return [];
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const [index, error] of errors.entries()) {
    // An anyOf/oneOf summary is dropped when its branches reported what went wrong, which says
    // more. ajv reports the branches just before the summary; a branch that is a $ref reports at
    // the referenced schema's path, so branches are recognised by where in the value they point.
    if ((error.keyword === 'anyOf' || error.keyword === 'oneOf') && errors.slice(0, index).some((other) => isWithin(other.instancePath, error.instancePath)))
      continue;
    // An `if` summary only says that its `then` (or `else`) failed; that branch's own errors say how.
    if (error.keyword === 'if') continue;
    const pointer =
      prefix + error.instancePath + (error.keyword === 'additionalProperties' ? `/${pointerSegment(String(error.params.additionalProperty))}` : '');
    const message = describeOne(error);
    const key = `${pointer} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ pointer, message });
  }
  return issues;
}

function isWithin(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}

function describeOne(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `Expected property "${String(params.missingProperty)}" to be present.`;
    case 'additionalProperties':
      return `Unexpected property "${String(params.additionalProperty)}".`;
    case 'oneOf':
      return params.passingSchemas ? 'Expected exactly one of the alternatives to match, but several do.' : 'Expected one of the alternatives to match.';
    case 'anyOf':
      return 'Expected one of the alternatives to match.';
    case 'type':
      return `Expected ${String(params.type)}.`;
    case 'enum':
      return `Expected one of ${JSON.stringify(params.allowedValues)}.`;
    case 'const':
      return `Expected ${JSON.stringify(params.allowedValue)}.`;
    default:
      return `Expected the value to satisfy "${error.keyword}": ${error.message ?? 'invalid'}.`;
  }
}

/** Validates `value` against `schema`; returns the issues (empty when valid). */
export function validateAgainst(schema: JsonSchema, value: unknown, prefix = ''): SchemaIssue[] {
  const validate = compileSchema(schema);
  if (validate(value)) return [];
  return describeErrors(validate.errors, prefix);
}

/** Keywords that say what a value means rather than which values a schema allows (MSG-25, TOOL-23). */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set(['description', 'title', 'examples', 'default', '$comment']);
