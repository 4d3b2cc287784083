/** Turns a Solution schema into OpenAI's strict structured-output subset, and maps strict answers back to the original schema. */
import mergeAllOf from 'json-schema-merge-allof';
import type { JsonSchema } from '../protocol/types.js';
import { isJsonObject } from '../protocol/types.js';
import { atPointer } from '../protocol/json.js';

/** The outcome of `toStrictSchema`. */
export interface StrictSchemaResult {
  /** The schema to send: the strict form, or the original when `strict` is false. */
  schema: JsonSchema;
  /** Whether the strict form could be built (send `strict: true`). */
  strict: boolean;
  /** Why it could not, when it could not. */
  reason?: string;
}

type SchemaObject = Record<string, unknown>;

/** Annotations kept in the strict form. */
const KEPT_ANNOTATIONS = new Set(['description', 'title']);
/** Keywords with no effect on validation that OpenAI may reject: dropped. */
const DROPPED_ANNOTATIONS = new Set([
  'default',
  'examples',
  '$comment',
  'readOnly',
  'writeOnly',
  'deprecated',
  'contentMediaType',
  'contentEncoding',
  '$schema',
]);
/** Constraints the strict subset supports: kept as they are. */
const KEPT_CONSTRAINTS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems']);
/**
 * Constraints the strict subset lacks, or lacks on some models (`pattern`), that only narrow a
 * value: said in the description instead, so the model still reads them (the core validates
 * answers against the original schema, which enforces them).
 */
const DESCRIBED_CONSTRAINTS: Record<string, (value: unknown) => string | undefined> = {
  minLength: (value) => `At least ${String(value)} characters.`,
  maxLength: (value) => `At most ${String(value)} characters.`,
  pattern: (value) => `Matches the regular expression ${JSON.stringify(value)}.`,
  uniqueItems: (value) => (value === true ? 'No two items are equal.' : undefined),
};
/** String formats the strict subset supports; other formats are said in the description. */
const SUPPORTED_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** The items of an array that can hold nothing (`maxItems: 0`, e.g. `calls` of a Request without tools): strict mode wants some. */
const NO_ITEMS = { type: 'object', properties: {}, required: [], additionalProperties: false } as const;
/** Keywords that decide nothing about null values (type-specific or structural). */
const NULL_NEUTRAL = new Set([
  ...KEPT_ANNOTATIONS,
  ...DROPPED_ANNOTATIONS,
  ...KEPT_CONSTRAINTS,
  ...Object.keys(DESCRIBED_CONSTRAINTS),
  'format',
  '$id',
  '$defs',
  'definitions',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'minContains',
  'maxContains',
  'unevaluatedProperties',
  'unevaluatedItems',
]);
const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** OpenAI's documented limits: object nesting and total properties. */
const MAX_OBJECT_DEPTH = 10;
const MAX_PROPERTIES = 5000;
const NULL_SCHEMA = { type: 'null' } as const;

class NotStrict extends Error {}

/**
 * Builds OpenAI's strict form of a schema: every object closed (`additionalProperties: false`)
 * with all properties required, optional properties made nullable (a `null` type in a type
 * array, or `anyOf [x, {type: 'null'}]`), `const` as a one-value `enum`, `allOf` merged,
 * disjoint `oneOf` as `anyOf`, annotations dropped, constraints the subset lacks (`minLength`,
 * `maxLength`, `pattern`, `uniqueItems`, other formats) said in the description instead, and an
 * array that can hold nothing (`maxItems: 0`) given closed empty objects as items (spec/models.md
 * MODEL-7). When the schema uses something the subset cannot express (open or free-form objects, `not`,
 * conditionals, tuples, remote `$ref`, boolean or empty schemas, ...) the original is returned
 * with `strict: false` and the reason.
 */
export function toStrictSchema(schema: JsonSchema): StrictSchemaResult {
  try {
    if (!isJsonObject(schema)) throw new NotStrict('the root schema is not an object schema');
    const transformer = new StrictTransformer(schema);
    const strict = transformer.transform(schema, '#', 0);
    if (strict.type !== 'object' || strict.anyOf !== undefined) throw new NotStrict('the root schema must be a plain object schema');
    return { schema: strict, strict: true };
  } catch (error) {
    if (error instanceof NotStrict) return { schema, strict: false, reason: error.message };
    throw error;
  }
}

class StrictTransformer {
  private properties = 0;
  constructor(private readonly root: SchemaObject) {}

  transform(node: unknown, path: string, objectDepth: number): SchemaObject {
    if (!isJsonObject(node)) throw new NotStrict(`${path} is ${typeof node === 'boolean' ? 'a boolean schema' : 'not a schema'}`);
    const source = node.allOf !== undefined ? mergeIntersection(node, path) : node;
    const out: SchemaObject = {};
    const notes: string[] = [];
    for (const [keyword, value] of Object.entries(source)) {
      const describe = Object.hasOwn(DESCRIBED_CONSTRAINTS, keyword) ? DESCRIBED_CONSTRAINTS[keyword] : undefined;
      if (KEPT_ANNOTATIONS.has(keyword) || KEPT_CONSTRAINTS.has(keyword)) out[keyword] = value;
      else if (describe) notes.push(describe(value) ?? '');
      else if (keyword === 'format' && !(typeof value === 'string' && SUPPORTED_FORMATS.has(value))) notes.push(`Format: ${String(value)}.`);
      else if (DROPPED_ANNOTATIONS.has(keyword) || keyword.startsWith('x-') || keyword.startsWith('_')) continue;
      else this.keyword(keyword, value, source, out, path, objectDepth);
    }
    const said = notes.filter(Boolean);
    if (said.length > 0) out.description = [typeof out.description === 'string' ? out.description : '', ...said].filter(Boolean).join(' ');
    if (out.enum !== undefined && out.type === undefined) out.type = typeOfValues(out.enum as unknown[]);
    const types = typeList(out.type);
    const objectShape = types.includes('object') || 'properties' in source || 'required' in source || 'additionalProperties' in source;
    if (objectShape) this.object(source, out, path, objectDepth);
    if (types.includes('array') && out.items === undefined) {
      if (source.maxItems !== 0) throw new NotStrict(`${path} is an array without "items"`);
      out.items = structuredClone(NO_ITEMS);
    }
    if (out.type === undefined && out.enum === undefined && out.anyOf === undefined && out.$ref === undefined) {
      throw new NotStrict(`${path} accepts any value`);
    }
    if (out.$ref !== undefined && Object.keys(out).some((keyword) => keyword !== '$ref' && !KEPT_ANNOTATIONS.has(keyword))) {
      throw new NotStrict(`${path} has keywords beside "$ref"`);
    }
    return out;
  }

  private keyword(keyword: string, value: unknown, source: SchemaObject, out: SchemaObject, path: string, objectDepth: number): void {
    switch (keyword) {
      case 'type': {
        const types = Array.isArray(value) ? value : [value];
        if (types.length === 0 || !types.every((type) => typeof type === 'string')) throw new NotStrict(`${path}/type is not a type name or list`);
        out.type = types.length === 1 ? types[0] : [...types];
        return;
      }
      case 'enum':
        if (!Array.isArray(value)) throw new NotStrict(`${path}/enum is not a list`);
        if ('const' in source) throw new NotStrict(`${path} has both "enum" and "const"`);
        out.enum = [...value];
        return;
      case 'const':
        out.enum = [value];
        return;
      case 'format':
        out.format = value; // a supported format; the others are described
        return;
      case '$id':
        if (path !== '#') throw new NotStrict(`${path} declares its own "$id"`);
        return;
      case 'properties':
      case 'required':
      case 'additionalProperties':
        return; // handled by object()
      case 'items':
        if (Array.isArray(value)) throw new NotStrict(`${path}/items is a tuple`);
        out.items = this.transform(value, `${path}/items`, objectDepth);
        return;
      case 'anyOf':
        if (!Array.isArray(value) || value.length === 0) throw new NotStrict(`${path}/anyOf is not a list of schemas`);
        if ('oneOf' in source) throw new NotStrict(`${path} has both "anyOf" and "oneOf"`);
        out.anyOf = value.map((branch, index) => this.transform(branch, `${path}/anyOf/${index}`, objectDepth));
        return;
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) throw new NotStrict(`${path}/oneOf is not a list of schemas`);
        // anyOf accepts what several oneOf branches accept at once; that is only safe for disjoint branches.
        if (value.length > 1 && !discriminated(value)) throw new NotStrict(`${path}/oneOf has branches that may overlap`);
        out.anyOf = value.map((branch, index) => this.transform(branch, `${path}/oneOf/${index}`, objectDepth));
        return;
      case '$ref':
        if (typeof value !== 'string' || !(value === '#' || value.startsWith('#/$defs/') || value.startsWith('#/definitions/'))) {
          throw new NotStrict(`${path}/$ref ${JSON.stringify(value)} is not a local definition`);
        }
        if (resolvePointer(this.root, value) === undefined) throw new NotStrict(`${path}/$ref ${JSON.stringify(value)} does not resolve`);
        out.$ref = value;
        return;
      case '$defs':
      case 'definitions':
        if (!isJsonObject(value)) throw new NotStrict(`${path}/${keyword} is not a map of schemas`);
        out[keyword] = Object.fromEntries(
          Object.entries(value).map(([name, definition]) => [name, this.transform(definition, `${path}/${keyword}/${name}`, 0)]),
        );
        return;
      default:
        throw new NotStrict(`${path} uses "${keyword}", which strict mode cannot express`);
    }
  }

  private object(source: SchemaObject, out: SchemaObject, path: string, objectDepth: number): void {
    if (objectDepth >= MAX_OBJECT_DEPTH) throw new NotStrict(`${path} nests objects deeper than ${MAX_OBJECT_DEPTH} levels`);
    const properties = source.properties ?? {};
    if (!isJsonObject(properties)) throw new NotStrict(`${path}/properties is not a map of schemas`);
    const additional = source.additionalProperties;
    if (additional !== undefined && additional !== false) throw new NotStrict(`${path} allows additional properties`);
    const names = Object.keys(properties);
    if (names.length === 0 && additional !== false) throw new NotStrict(`${path} is a free-form object`);
    const required = Array.isArray(source.required) ? (source.required as unknown[]) : [];
    for (const name of required) {
      if (typeof name !== 'string' || !Object.hasOwn(properties, name)) {
        throw new NotStrict(`${path} requires ${JSON.stringify(name)} without declaring it`);
      }
    }
    this.properties += names.length;
    if (this.properties > MAX_PROPERTIES) throw new NotStrict(`the schema has more than ${MAX_PROPERTIES} properties`);
    const strictProperties: SchemaObject = {};
    for (const name of names) {
      const original = properties[name];
      const strict = this.transform(original, `${path}/properties/${name}`, objectDepth + 1);
      strictProperties[name] = required.includes(name) || acceptsNull(original, this.root) ? strict : nullable(strict);
    }
    if (out.type === undefined) out.type = 'object';
    out.properties = strictProperties;
    out.required = names;
    out.additionalProperties = false;
  }
}

/** Merges an `allOf` with json-schema-merge-allof; an impossible merge (or one through `$ref`) is not strict. */
function mergeIntersection(node: SchemaObject, path: string): SchemaObject {
  if (JSON.stringify(node.allOf).includes('"$ref"')) throw new NotStrict(`${path}/allOf refers to definitions`);
  try {
    return mergeAllOf(node as Parameters<typeof mergeAllOf>[0]) as SchemaObject;
  } catch (error) {
    throw new NotStrict(`${path}/allOf cannot be merged: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** True when every branch is an object with a required property fixed to a value no other branch uses. */
function discriminated(branches: unknown[]): boolean {
  const first = branches[0];
  if (!isJsonObject(first) || !isJsonObject(first.properties)) return false;
  return Object.keys(first.properties).some((name) => {
    const values = branches.map((branch) => {
      if (!isJsonObject(branch) || !isJsonObject(branch.properties) || !Array.isArray(branch.required) || !branch.required.includes(name)) return undefined;
      const property = branch.properties[name];
      if (!isJsonObject(property)) return undefined;
      if ('const' in property) return JSON.stringify(property.const);
      return Array.isArray(property.enum) && property.enum.length === 1 ? JSON.stringify(property.enum[0]) : undefined;
    });
    return values.every((value) => value !== undefined) && new Set(values).size === values.length;
  });
}

/** Makes a strict schema also accept `null`. */
function nullable(schema: SchemaObject): SchemaObject {
  const types = typeList(schema.type);
  if (
    types.length > 0 &&
    types.every((type) => PRIMITIVE_TYPES.has(type)) &&
    schema.enum === undefined &&
    schema.anyOf === undefined &&
    schema.$ref === undefined
  ) {
    return { ...schema, type: types.includes('null') ? schema.type : [...types, 'null'] };
  }
  if (Array.isArray(schema.anyOf) && Object.keys(schema).every((keyword) => keyword === 'anyOf' || KEPT_ANNOTATIONS.has(keyword))) {
    return { ...schema, anyOf: [...schema.anyOf, NULL_SCHEMA] };
  }
  return { anyOf: [schema, NULL_SCHEMA] };
}

function typeList(type: unknown): string[] {
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((item): item is string => typeof item === 'string') : [];
}

function typeOfValues(values: unknown[]): string | string[] | undefined {
  const types = [...new Set(values.map(jsonType))];
  if (types.length === 0 || types.includes('object') || types.includes('array')) return undefined;
  return types.length === 1 ? types[0] : types;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Whether a schema surely accepts `null` (false when unsure, which is the safe answer: an
 * optional property's `null` is then dropped, and dropping an optional property is always valid).
 */
export function acceptsNull(schema: unknown, root: unknown, depth = 0): boolean {
  if (schema === true) return true;
  if (!isJsonObject(schema) || depth > 32) return false;
  for (const keyword of Object.keys(schema)) {
    if (!NULL_NEUTRAL.has(keyword) && !['type', 'const', 'enum', 'anyOf', 'oneOf', 'allOf', '$ref'].includes(keyword)) return false;
  }
  if (schema.type !== undefined && !typeList(schema.type).includes('null')) return false;
  if ('const' in schema && schema.const !== null) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((branch) => acceptsNull(branch, root, depth + 1))) return false;
  if (Array.isArray(schema.oneOf) && schema.oneOf.filter((branch) => acceptsNull(branch, root, depth + 1)).length !== 1) return false;
  if (Array.isArray(schema.allOf) && !schema.allOf.every((branch) => acceptsNull(branch, root, depth + 1))) return false;
  if (typeof schema.$ref === 'string') {
    const target = resolvePointer(root, schema.$ref);
    if (target === undefined || !acceptsNull(target, root, depth + 1)) return false;
  }
  return true;
}

/**
 * Maps a value produced under the strict form back to the original schema: a `null` in an
 * optional property whose original schema does not accept `null` is removed. Unions pick the
 * first branch the mapped value fits; everything else is kept as it is.
 */
export function fromStrictValue(value: unknown, originalSchema: JsonSchema): unknown {
  return mapBack(value, originalSchema, originalSchema, 0);
}

function mapBack(value: unknown, schema: unknown, root: unknown, hops: number): unknown {
  if (!isJsonObject(schema) || hops > 32) return value;
  let result = value;
  if (typeof schema.$ref === 'string') {
    const target = resolvePointer(root, schema.$ref);
    if (target !== undefined) result = mapBack(result, target, root, hops + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const merged = mergedOrUndefined(schema);
    if (merged) return mapBack(result, merged, root, hops + 1);
  }
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches) {
    for (const branch of branches) {
      const candidate = mapBack(result, branch, root, 0);
      if (fits(candidate, branch, root, 0)) {
        result = candidate;
        break;
      }
    }
  }
  if (Array.isArray(result) && isJsonObject(schema.items)) {
    const items = schema.items;
    result = result.map((item) => mapBack(item, items, root, 0));
  }
  if (isJsonObject(result) && isJsonObject(schema.properties)) {
    const properties = schema.properties;
    const required = Array.isArray(schema.required) ? schema.required : [];
    const entries: Array<[string, unknown]> = [];
    for (const [name, item] of Object.entries(result)) {
      if (!Object.hasOwn(properties, name)) {
        entries.push([name, item]);
        continue;
      }
      const property = properties[name];
      if (item === null && !required.includes(name) && !acceptsNull(property, root)) continue;
      entries.push([name, mapBack(item, property, root, 0)]);
    }
    result = Object.fromEntries(entries);
  }
  return result;
}

const mergedCache = new WeakMap<object, SchemaObject | null>();

function mergedOrUndefined(schema: SchemaObject): SchemaObject | undefined {
  if (!mergedCache.has(schema)) {
    try {
      mergedCache.set(schema, mergeIntersection(schema, '#'));
    } catch {
      mergedCache.set(schema, null);
    }
  }
  return mergedCache.get(schema) ?? undefined;
}

/**
 * A structural check of a value against a schema (types, const, enum, required and closed
 * properties, items, unions, local refs): enough to tell union branches apart. String and
 * number constraints are not checked.
 */
function fits(value: unknown, schema: unknown, root: unknown, hops: number): boolean {
  if (typeof schema === 'boolean') return schema;
  if (!isJsonObject(schema) || hops > 32) return true;
  if (typeof schema.$ref === 'string') {
    const target = resolvePointer(root, schema.$ref);
    if (target !== undefined && !fits(value, target, root, hops + 1)) return false;
  }
  if (schema.type !== undefined) {
    const type = jsonType(value);
    const allowed = typeList(schema.type);
    if (!allowed.includes(type) && !(type === 'integer' && allowed.includes('number'))) return false;
  }
  if ('const' in schema && !deepEqual(value, schema.const)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => deepEqual(value, option))) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((branch) => fits(value, branch, root, 0))) return false;
  if (Array.isArray(schema.oneOf) && schema.oneOf.filter((branch) => fits(value, branch, root, 0)).length !== 1) return false;
  if (Array.isArray(schema.allOf) && !schema.allOf.every((branch) => fits(value, branch, root, 0))) return false;
  if (schema.not !== undefined && fits(value, schema.not, root, 0)) return false;
  if (Array.isArray(value) && isJsonObject(schema.items)) {
    const items = schema.items;
    if (!value.every((item) => fits(item, items, root, 0))) return false;
  }
  if (isJsonObject(value)) {
    const properties = isJsonObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required) && !schema.required.every((name) => typeof name === 'string' && Object.hasOwn(value, name))) return false;
    for (const [name, item] of Object.entries(value)) {
      if (Object.hasOwn(properties, name)) {
        if (!fits(item, properties[name], root, 0)) return false;
      } else if (schema.additionalProperties !== undefined && schema.additionalProperties !== true) {
        if (!fits(item, schema.additionalProperties, root, 0)) return false;
      }
    }
  }
  return true;
}

function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left)) return Array.isArray(right) && left.length === right.length && left.every((item, index) => deepEqual(item, right[index]));
  if (isJsonObject(left) && isJsonObject(right)) {
    const keys = Object.keys(left);
    return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
  }
  return false;
}

/** Resolves a local `$ref` (`#` or `#/json/pointer`) against the root schema. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  return atPointer(root, fragment).value;
}
