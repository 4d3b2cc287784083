/** JSON Schema validation: the project's own document schemas (spec/schemas), precompiled by the build, and users' schemas, compiled once and cached. */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import callSchema from '../../spec/schemas/call.schema.json' with { type: 'json' };
import cassetteSchema from '../../spec/schemas/cassette.schema.json' with { type: 'json' };
import messageSchema from '../../spec/schemas/message.schema.json' with { type: 'json' };
import modelsSchema from '../../spec/schemas/models.schema.json' with { type: 'json' };
import requestSchema from '../../spec/schemas/request.schema.json' with { type: 'json' };
import toolSchema from '../../spec/schemas/tool.schema.json' with { type: 'json' };
import { pointerSegment } from './json.js';
import type { JsonSchema } from './types.js';

// ajv and ajv-formats are CommonJS, loaded synchronously on first use: a run that compiles no schema never loads them (CLI-34).
const require = createRequire(import.meta.url);

/** The folder holding the JSON Schemas of every document (the single source of truth). */
export const SCHEMA_DIRECTORY = new URL('../../spec/schemas/', import.meta.url);

/**
 * Every schema of spec/schemas, imported as JSON modules rather than read from the folder, so the
 * core reads no files and a bundler can inline them (a test checks none of the folder's is missing).
 */
export const DOCUMENT_SCHEMAS: readonly { $id: string; $defs?: object }[] = [
  callSchema,
  cassetteSchema,
  messageSchema,
  modelsSchema,
  requestSchema,
  toolSchema,
];

/** The prefix of every `$id` of spec/schemas: a document schema's name is its `$id` without it. */
export const SCHEMA_BASE = 'https://delegate-run.dev/schemas/';

/** The `config` keys of a Request document the runtime understands (DOC-3): those request.schema.json describes. */
export const CONFIG_KEYS: readonly string[] = Object.keys(requestSchema.properties.config.properties);

/** The options of the ajv instance for the project's own schemas (strict): the build's precompiled validators are made with the same. */
export const DOCUMENT_AJV_OPTIONS: Options = { allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, ownProperties: true };

/**
 * The names `documentSchema` knows precompiled (CLI-34): each file of spec/schemas and each of its
 * `$defs`, e.g. `message.schema.json#/$defs/turn`. The build compiles exactly these.
 */
export function documentSchemaNames(): string[] {
  return DOCUMENT_SCHEMAS.flatMap((schema) => {
    const file = schema.$id.slice(SCHEMA_BASE.length);
    return [file, ...Object.keys(schema.$defs ?? {}).map((definition) => `${file}#/$defs/${definition}`)];
  });
}

/** The SHA-256 of the schemas of spec/schemas as loaded: the build records the one it compiled, so a test finds a build older than a schema. */
export function documentSchemaDigest(): string {
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(JSON.stringify(DOCUMENT_SCHEMAS)).digest('hex');
}

/** A new ajv of JSON Schema 2020-12 with ajv-formats' formats, ajv loaded now if it was not yet. */
export function newAjv(options: Options): Ajv2020 {
  const { Ajv2020: AjvClass } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as (ajv: Ajv2020) => Ajv2020;
  return addFormats(new AjvClass(options));
}

/**
 * Where the build writes the precompiled validators (CLI-34): dist/protocol, named through the
 * folder's name so it resolves from this module's folder and from the executables' bundle in
 * dist/bundle alike.
 */
const PRECOMPILED = new URL('../protocol/document-validators.cjs', import.meta.url);

/**
 * The validators the build compiled (CLI-34): `documents`, each of `documentSchemaNames()`, and
 * `userSchema`, JSON Schema 2020-12's meta-schema as the ajv of users' schemas checks a schema.
 * The build writes them into dist/protocol/document-validators.cjs.
 */
export interface PrecompiledValidators {
  documents: Readonly<Record<string, ValidateFunction>>;
  userSchema: ValidateFunction;
  /** `documentSchemaDigest()` of the schemas compiled. */
  sources: string;
}

let precompiled: PrecompiledValidators | null | undefined;

/**
 * The build's validators, or null from the TypeScript sources (no build), where ajv compiles them
 * instead. Built code without them is a broken build, not a slower start: it throws (CLI-34).
 */
function precompiledValidators(): PrecompiledValidators | null {
  if (precompiled === undefined) {
    const path = fileURLToPath(PRECOMPILED);
    try {
      precompiled = require(path) as PrecompiledValidators;
    } catch (error) {
      const fromSources = import.meta.url.endsWith('.ts') && (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
      if (!fromSources)
        throw new Error(`Expected the precompiled validators of spec/schemas at ${path} (CLI-34): run \`npm run build\` again.`, { cause: error });
      precompiled = null;
    }
  }
  return precompiled;
}

let documentAjv: Ajv2020 | undefined;

/**
 * The compiled validator of one of the project's schemas, e.g. `request.schema.json#/$defs/x`:
 * the build's precompiled one (CLI-34), so no run pays for compiling the fixed schemas; from the
 * TypeScript sources (no build) or for another fragment, compiled by ajv on first use.
 */
export function documentSchema(name: string): ValidateFunction {
  const documents = precompiledValidators()?.documents;
  const built = documents && Object.hasOwn(documents, name) ? documents[name] : undefined;
  return built ?? compiledDocumentSchema(name);
}

/** One of the project's schemas compiled by ajv, with every schema of spec/schemas added. */
export function compiledDocumentSchema(name: string): ValidateFunction {
  if (!documentAjv) {
    documentAjv = newAjv(DOCUMENT_AJV_OPTIONS);
    for (const schema of DOCUMENT_SCHEMAS) documentAjv.addSchema(schema);
  }
  const validate = documentAjv.getSchema(SCHEMA_BASE + name);
  if (!validate) throw new Error(`No schema ${name} in spec/schemas.`);
  return validate;
}

/** The options of the ajv of users' schemas; the build compiles its meta-schema check with the same. */
// ownProperties: a parameter named like an inherited member (toString) is not present on {}.
export const USER_AJV_OPTIONS: Options = { allErrors: true, strict: false, allowUnionTypes: true, validateFormats: true, ownProperties: true };

/**
 * The ajv of users' schemas, made on the first one compiled. With the build's meta-schema
 * validator it checks no schema itself (compiling the meta-schema is most of a first compile's
 * cost): `checkUserSchema` does, with the same message.
 */
function userCompiler(): Ajv2020 {
  userAjv ??= newAjv({ ...USER_AJV_OPTIONS, validateSchema: precompiledValidators() === null });
  return userAjv;
}

/** Throws as ajv's own check does (`schema is invalid: data/type must be …`) when a user's schema breaks the meta-schema; the build's validator does the checking. */
function checkUserSchema(ajv: Ajv2020, schema: JsonSchema): void {
  const check = precompiledValidators()?.userSchema;
  if (!check || typeof schema === 'boolean' || check(schema)) return;
  throw new Error(`schema is invalid: ${ajv.errorsText(check.errors)}`);
}

let userAjv: Ajv2020 | undefined;
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
    const ajv = userCompiler();
    checkUserSchema(ajv, copy as JsonSchema);
    validate = ajv.compile(copy as object | boolean);
  } finally {
    // ajv keeps every schema it compiles (a failed one too) for the life of the instance; the
    // validator works without it, so this bounded cache alone keeps them. A Solution schema is
    // composed anew each step, and a server runs for weeks.
    if (typeof copy === 'object') userAjv?.removeSchema(copy);
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
