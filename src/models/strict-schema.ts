/** Turns a Solution schema into a provider's strict structured-output subset (OpenAI, Anthropic), and maps strict answers back to the original schema. */
import { createRequire } from 'node:module';
import type { SchemaForm } from '../protocol/model.js';
import type { JsonSchema } from '../protocol/types.js';
import { isJsonObject } from '../protocol/types.js';
import { atPointer, parseJson } from '../protocol/json.js';

/** The provider whose strict subset a schema is built for (MODEL-7, MODEL-15). */
export type StrictProfile = 'openai' | 'anthropic';

/** A part of the schema sent as a JSON-encoded string because strict mode cannot express it (MODEL-14). */
export interface EncodedPart {
  /** The JSON pointer (`#/properties/output/properties/song`) of the part in the original schema. */
  pointer: string;
  /** Why strict mode cannot express it. */
  reason: string;
}

/** The outcome of `toStrictSchema`. */
export interface StrictSchemaResult {
  /** The schema to send: the strict form, or the original when `strict` is false. */
  schema: JsonSchema;
  /** Whether the strict form could be built (send `strict: true`). */
  strict: boolean;
  /** Why it could not, when it could not. */
  reason?: string;
  /** The JSON pointer of the part that made it not strict, when one part did (MODEL-16). */
  pointer?: string;
  /** The parts sent as JSON-encoded strings in the strict form (MODEL-14); empty when none or not strict. */
  encoded: EncodedPart[];
  /** The original schema nodes of `encoded`: `fromStrictValue` decodes the strings they hold. */
  encodedNodes: ReadonlySet<object>;
}

type SchemaObject = Record<string, unknown>;

/** The form (MODEL-17) a strict-or-not schema result goes out in, with why and where when not strict. */
export function schemaFormOf(result: Pick<StrictSchemaResult, 'strict' | 'reason' | 'pointer' | 'encoded'>): SchemaForm {
  if (result.strict) return { form: 'strict', ...(result.encoded.length > 0 ? { encoded: result.encoded.map((part) => part.pointer) } : {}) };
  return { form: 'non_strict', ...(result.reason ? { reason: result.reason } : {}), ...(result.pointer ? { pointer: result.pointer } : {}) };
}

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
/** Constraints OpenAI's strict subset supports: kept as they are. */
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
/** Constraints Anthropic's strict subset lacks besides those above (MODEL-15): said in the description too. */
const ANTHROPIC_DESCRIBED_CONSTRAINTS: Record<string, (value: unknown) => string | undefined> = {
  minimum: (value) => `At least ${String(value)}.`,
  maximum: (value) => `At most ${String(value)}.`,
  exclusiveMinimum: (value) => `More than ${String(value)}.`,
  exclusiveMaximum: (value) => `Less than ${String(value)}.`,
  multipleOf: (value) => `A multiple of ${String(value)}.`,
  maxItems: (value) => `At most ${String(value)} items.`,
};
/** String formats each strict subset supports; other formats are said in the description. */
const SUPPORTED_FORMATS: Record<StrictProfile, ReadonlySet<string>> = {
  openai: new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']),
  anthropic: new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']),
};
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
/** OpenAI's documented limits (MODEL-16): object nesting, total properties, enum sizes and the text of names and values. */
export const OPENAI_STRICT_LIMITS = {
  objectDepth: 10,
  properties: 5000,
  enumValues: 1000,
  /** An enum with more than `largeEnum` values may hold at most `largeEnumCharacters` characters of string values. */
  largeEnum: 250,
  largeEnumCharacters: 15_000,
  /** Property names, enum values and const values together. */
  characters: 120_000,
} as const;
/** Anthropic's documented limits of strict tools (MODEL-15): optional parameters and parameters with unions, across the request. */
export const ANTHROPIC_STRICT_LIMITS = { optionalParameters: 24, unionParameters: 16 } as const;
const NULL_SCHEMA = { type: 'null' } as const;
const NO_ENCODED: ReadonlySet<object> = new Set();

/** Why a schema (or a part of it) cannot be strict; an `encodable` part can travel as a JSON-encoded string instead (MODEL-14). */
class NotStrict extends Error {
  constructor(
    message: string,
    readonly pointer: string,
    readonly encodable = true,
    /** Past a limit: the original parts whose encoding would bring the schema within it, each with why (MODEL-16). */
    readonly culprits?: ReadonlyMap<object, string>,
  ) {
    super(message);
  }
}
/** How many times a schema past OpenAI's limits is built again with more parts encoded before it is sent non-strict. */
const LIMIT_ROUNDS = 4;

/**
 * Builds a provider's strict form of a schema (MODEL-7 for OpenAI, MODEL-15 for Anthropic): every
 * object closed (`additionalProperties: false`); for OpenAI every property required and optional
 * ones made nullable (a `null` type in a type array, or `anyOf [x, {type: 'null'}]`); `const` as a
 * one-value `enum`, `allOf` merged, disjoint `oneOf` as `anyOf`, annotations dropped, constraints
 * the subset lacks said in the description instead, and an array that can hold nothing
 * (`maxItems: 0`) given closed empty objects as items. A part the subset cannot express (a
 * free-form or open object, a map, `patternProperties`, an overlapping `oneOf`, `not`,
 * conditionals, tuples, ...) becomes a JSON-encoded string whose description holds the part's
 * schema (MODEL-14; `fromStrictValue` decodes it), and so do the parts past OpenAI's enum and
 * character limits (MODEL-16). Past the other limits (nesting, property count, Anthropic's), or
 * when the root itself cannot be expressed, the original is returned with `strict: false`, the
 * reason and the pointer of the part at fault.
 */
export function toStrictSchema(schema: JsonSchema, profile: StrictProfile = 'openai'): StrictSchemaResult {
  try {
    if (!isJsonObject(schema)) throw new NotStrict('the root schema is not an object schema', '#', false);
    // Anthropic takes optional properties as they are; OpenAI wants every property required (optional ones nullable).
    if (profile === 'anthropic') return strictForm(schema, profile, false, checkAnthropicLimits, new Map());
    // Past an enum or character limit, the parts that pass it travel encoded, and the rest stays strict (MODEL-16).
    let forced = new Map<object, string>();
    for (let round = 1; ; round += 1) {
      try {
        return strictForm(schema, profile, true, checkOpenAILimits, forced);
      } catch (error) {
        if (!(error instanceof NotStrict) || error.culprits === undefined || round >= LIMIT_ROUNDS) throw error;
        forced = new Map([...forced, ...error.culprits]);
      }
    }
  } catch (error) {
    if (error instanceof NotStrict) return { schema, strict: false, reason: error.message, pointer: error.pointer, encoded: [], encodedNodes: NO_ENCODED };
    throw error;
  }
}

/** A provider's strict forms, built once per schema object (a run's steps share their Solution schemas, MSG-26). */
export class StrictSchemas {
  private readonly built = new WeakMap<object, StrictSchemaResult>();
  constructor(private readonly profile: StrictProfile) {}

  /** The strict form of `schema` for this provider. */
  of(schema: JsonSchema): StrictSchemaResult {
    if (!isJsonObject(schema)) return toStrictSchema(schema, this.profile);
    let result = this.built.get(schema);
    if (!result) {
      result = toStrictSchema(schema, this.profile);
      this.built.set(schema, result);
    }
    return result;
  }

  /**
   * The strict form of the output object a request's answer may be alone (MSG-32), when it can be
   * built; undefined otherwise, and the Solution is sent as before, where a part strict mode cannot
   * express travels encoded (MODEL-14) instead of making the whole answer non-strict.
   */
  ofOutput(outputSchema: JsonSchema | undefined): StrictSchemaResult | undefined {
    if (outputSchema === undefined) return undefined;
    const result = this.of(outputSchema);
    return result.strict ? result : undefined;
  }
}

/** The strict form of a schema built with or without all properties required, checked against the provider's limits. */
function strictForm(
  schema: SchemaObject,
  profile: StrictProfile,
  requireAll: boolean,
  checkLimits: (strict: SchemaObject, origins: ReadonlyMap<object, Origin>) => void,
  forced: ReadonlyMap<object, string>,
): StrictSchemaResult {
  const transformer = new StrictTransformer(schema, profile, requireAll, forced);
  const strict = transformer.transform(schema, '#', 0);
  if (strict.type !== 'object' || strict.anyOf !== undefined) throw new NotStrict('the root schema must be a plain object schema', '#', false);
  checkLimits(strict, transformer.origins);
  return { schema: strict, strict: true, encoded: transformer.encoded, encodedNodes: transformer.encodedNodes };
}

/** The original node a strict node was built from, and its pointer. */
interface Origin {
  node: object;
  path: string;
}

class StrictTransformer {
  private properties = 0;
  /** The original node of each strict node built (MODEL-16 names the parts to encode through it). */
  readonly origins = new Map<object, Origin>();
  readonly encoded: EncodedPart[] = [];
  readonly encodedNodes = new Set<object>();
  /** The nodes of `encoded`, in its order. */
  private readonly encodedMarks: object[] = [];
  private readonly recursive: Set<string>;
  constructor(
    private readonly root: SchemaObject,
    private readonly profile: StrictProfile,
    private readonly requireAll: boolean,
    /** Parts past a limit, sent encoded (MODEL-16), with why. */
    private readonly forced: ReadonlyMap<object, string>,
  ) {
    // Anthropic's strict tools take no recursive schema (MODEL-15): a reference back into itself travels encoded.
    this.recursive = profile === 'anthropic' ? recursiveReferences(root) : new Set();
  }

  /**
   * The strict form of `node`, or, when the subset cannot express it (and it is not the root),
   * a JSON-encoded string standing for it (MODEL-14); a part past an enum or character limit too (MODEL-16).
   */
  transform(node: unknown, path: string, objectDepth: number): SchemaObject {
    if (path === '#') return this.exact(node, path, objectDepth);
    const forced = isJsonObject(node) ? this.forced.get(node) : undefined;
    if (forced !== undefined) return this.encode(node, path, forced);
    const properties = this.properties;
    const encodedBefore = this.encoded.length;
    try {
      return this.exact(node, path, objectDepth);
    } catch (error) {
      if (!(error instanceof NotStrict) || !error.encodable) throw error;
      // What was counted or encoded inside the part is gone with it.
      this.properties = properties;
      this.encoded.splice(encodedBefore);
      for (const dropped of this.encodedMarks.splice(encodedBefore)) this.encodedNodes.delete(dropped);
      return this.encode(node, path, error.message);
    }
  }

  /** A JSON-encoded string in place of a part: its description says what the string must hold (MODEL-14). */
  private encode(node: unknown, path: string, reason: string): SchemaObject {
    const said = isJsonObject(node) && typeof node.description === 'string' ? `${node.description} ` : '';
    // A boolean schema has no identity to find again: its stand-in is never reached by mapping back.
    const mark = isJsonObject(node) ? node : {};
    this.encodedNodes.add(mark);
    this.encodedMarks.push(mark);
    this.encoded.push({ pointer: path, reason });
    const text = JSON.stringify(node);
    // A part that refers to definitions brings them along: the string's reader has no other copy.
    const definitions = text.includes('"$ref"') ? JSON.stringify({ $defs: this.root.$defs, definitions: this.root.definitions }) : undefined;
    const description = `${said}Written as a string holding JSON (JSON-encoded), which is decoded on receipt; the decoded value must match this JSON Schema: ${text}${definitions ? `, whose references resolve in ${definitions}` : ''}`;
    return { type: 'string', description };
  }

  private exact(node: unknown, path: string, objectDepth: number): SchemaObject {
    const out = this.build(node, path, objectDepth);
    if (isJsonObject(node)) this.origins.set(out, { node, path });
    return out;
  }

  private build(node: unknown, path: string, objectDepth: number): SchemaObject {
    if (!isJsonObject(node)) throw new NotStrict(`${path} is ${typeof node === 'boolean' ? 'a boolean schema' : 'not a schema'}`, path);
    const source = node.allOf !== undefined ? mergeIntersection(node, path) : node;
    const out: SchemaObject = {};
    const notes: string[] = [];
    for (const [keyword, value] of Object.entries(source)) {
      const describe = this.describer(keyword, value);
      if (KEPT_ANNOTATIONS.has(keyword) || (KEPT_CONSTRAINTS.has(keyword) && !describe)) out[keyword] = value;
      else if (describe) notes.push(describe(value) ?? '');
      else if (keyword === 'format' && !(typeof value === 'string' && SUPPORTED_FORMATS[this.profile].has(value))) notes.push(`Format: ${String(value)}.`);
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
      if (source.maxItems !== 0) throw new NotStrict(`${path} is an array without "items"`, path);
      out.items = structuredClone(NO_ITEMS);
    }
    if (out.type === undefined && out.enum === undefined && out.anyOf === undefined && out.$ref === undefined) {
      throw new NotStrict(`${path} accepts any value`, path);
    }
    if (out.$ref !== undefined) {
      // OpenAI refuses any keyword beside "$ref", annotations too (MODEL-16): they are dropped.
      if (Object.keys(out).some((keyword) => keyword !== '$ref' && !KEPT_ANNOTATIONS.has(keyword))) {
        throw new NotStrict(`${path} has keywords beside "$ref"`, path);
      }
      return { $ref: out.$ref };
    }
    return out;
  }

  /** How a keyword is said in the description instead of kept, under this profile. */
  private describer(keyword: string, value: unknown): ((value: unknown) => string | undefined) | undefined {
    if (Object.hasOwn(DESCRIBED_CONSTRAINTS, keyword)) return DESCRIBED_CONSTRAINTS[keyword];
    if (this.profile !== 'anthropic') return undefined;
    // Anthropic keeps `minItems` of 0 or 1 only.
    if (keyword === 'minItems') return value === 0 || value === 1 ? undefined : (count) => `At least ${String(count)} items.`;
    return Object.hasOwn(ANTHROPIC_DESCRIBED_CONSTRAINTS, keyword) ? ANTHROPIC_DESCRIBED_CONSTRAINTS[keyword] : undefined;
  }

  private keyword(keyword: string, value: unknown, source: SchemaObject, out: SchemaObject, path: string, objectDepth: number): void {
    switch (keyword) {
      case 'type': {
        const types = Array.isArray(value) ? value : [value];
        if (types.length === 0 || !types.every((type) => typeof type === 'string')) throw new NotStrict(`${path}/type is not a type name or list`, path);
        out.type = types.length === 1 ? types[0] : [...types];
        return;
      }
      case 'enum':
        if (!Array.isArray(value)) throw new NotStrict(`${path}/enum is not a list`, path);
        if ('const' in source) throw new NotStrict(`${path} has both "enum" and "const"`, path);
        if (this.profile === 'anthropic' && value.some((option) => option !== null && typeof option === 'object')) {
          throw new NotStrict(`${path}/enum holds objects or arrays`, path);
        }
        out.enum = [...value];
        return;
      case 'const':
        if (this.profile === 'anthropic' && value !== null && typeof value === 'object') throw new NotStrict(`${path}/const is an object or array`, path);
        out.enum = [value];
        return;
      case 'format':
        out.format = value; // a supported format; the others are described
        return;
      case '$id':
        if (path !== '#') throw new NotStrict(`${path} declares its own "$id"`, path);
        return;
      case 'properties':
      case 'required':
      case 'additionalProperties':
        return; // handled by object()
      case 'items':
        if (Array.isArray(value)) throw new NotStrict(`${path}/items is a tuple`, path);
        out.items = this.transform(value, `${path}/items`, objectDepth);
        return;
      case 'anyOf':
        if (!Array.isArray(value) || value.length === 0) throw new NotStrict(`${path}/anyOf is not a list of schemas`, path);
        if ('oneOf' in source) throw new NotStrict(`${path} has both "anyOf" and "oneOf"`, path);
        out.anyOf = value.map((branch, index) => this.transform(branch, `${path}/anyOf/${index}`, objectDepth));
        return;
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) throw new NotStrict(`${path}/oneOf is not a list of schemas`, path);
        // anyOf accepts what several oneOf branches accept at once; that is only safe for disjoint branches.
        if (value.length > 1 && !discriminated(value)) throw new NotStrict(`${path}/oneOf has branches that may overlap`, path);
        out.anyOf = value.map((branch, index) => this.transform(branch, `${path}/oneOf/${index}`, objectDepth));
        return;
      case '$ref':
        if (typeof value !== 'string' || !(value === '#' || value.startsWith('#/$defs/') || value.startsWith('#/definitions/'))) {
          throw new NotStrict(`${path}/$ref ${JSON.stringify(value)} is not a local definition`, path);
        }
        if (resolvePointer(this.root, value) === undefined) throw new NotStrict(`${path}/$ref ${JSON.stringify(value)} does not resolve`, path);
        if (this.recursive.has(value)) throw new NotStrict(`${path}/$ref ${JSON.stringify(value)} is recursive`, path);
        out.$ref = value;
        return;
      case '$defs':
      case 'definitions': {
        if (!isJsonObject(value)) throw new NotStrict(`${path}/${keyword} is not a map of schemas`, path);
        const definitions: SchemaObject = {};
        for (const [name, definition] of Object.entries(value)) {
          // A recursive definition is only reached through encoded references: it is not sent.
          if (this.recursive.has(`${path}/${keyword}/${name}`)) continue;
          definitions[name] = this.transform(definition, `${path}/${keyword}/${name}`, 0);
        }
        out[keyword] = definitions;
        return;
      }
      default:
        throw new NotStrict(`${path} uses "${keyword}", which strict mode cannot express`, path);
    }
  }

  private object(source: SchemaObject, out: SchemaObject, path: string, objectDepth: number): void {
    // OpenAI's nesting and property-count limits (MODEL-16); Anthropic documents none.
    if (this.profile === 'openai' && objectDepth >= OPENAI_STRICT_LIMITS.objectDepth) {
      throw new NotStrict(`${path} nests objects deeper than ${OPENAI_STRICT_LIMITS.objectDepth} levels`, path, false);
    }
    const properties = source.properties ?? {};
    if (!isJsonObject(properties)) throw new NotStrict(`${path}/properties is not a map of schemas`, path);
    const additional = source.additionalProperties;
    const names = Object.keys(properties);
    if (names.length === 0 && additional !== false) throw new NotStrict(`${path} is a free-form object`, path);
    if (additional !== undefined && additional !== false) {
      throw new NotStrict(`${path} ${isJsonObject(additional) ? 'is a map (additionalProperties)' : 'allows additional properties'}`, path);
    }
    const required = Array.isArray(source.required) ? (source.required as unknown[]) : [];
    for (const name of required) {
      if (typeof name !== 'string' || !Object.hasOwn(properties, name)) {
        throw new NotStrict(`${path} requires ${JSON.stringify(name)} without declaring it`, path);
      }
    }
    this.properties += names.length;
    if (this.profile === 'openai' && this.properties > OPENAI_STRICT_LIMITS.properties) {
      throw new NotStrict(`the schema has more than ${OPENAI_STRICT_LIMITS.properties} properties`, path, false);
    }
    const strictProperties: SchemaObject = {};
    for (const name of names) {
      const original = properties[name];
      const strict = this.transform(original, `${path}/properties/${escapePointer(name)}`, objectDepth + 1);
      const sent = !this.requireAll || required.includes(name) || acceptsNull(original, this.root) ? strict : nullable(strict);
      const origin = this.origins.get(strict);
      if (sent !== strict && origin) this.origins.set(sent, origin);
      strictProperties[name] = sent;
    }
    if (out.type === undefined) out.type = 'object';
    out.properties = strictProperties;
    out.required = this.requireAll ? names : required.filter((name): name is string => typeof name === 'string');
    out.additionalProperties = false;
  }
}

/** A property name as a JSON-pointer segment. */
function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The local references (`#`, `#/$defs/x`) whose target reaches itself again through references:
 * the recursive ones, which Anthropic's strict tools cannot take (MODEL-15).
 */
function recursiveReferences(root: SchemaObject): Set<string> {
  const referencesIn = (node: unknown, found: Set<string>, skipDefinitions: boolean): Set<string> => {
    if (Array.isArray(node)) for (const item of node) referencesIn(item, found, false);
    else if (isJsonObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') found.add(value);
        else if (!(skipDefinitions && (key === '$defs' || key === 'definitions'))) referencesIn(value, found, false);
      }
    }
    return found;
  };
  const recursive = new Set<string>();
  for (const start of referencesIn(root, new Set(), false)) {
    const seen = new Set<string>();
    const queue = [start];
    while (queue.length > 0) {
      const ref = queue.pop() as string;
      if (seen.has(ref)) continue;
      seen.add(ref);
      for (const next of referencesIn(resolvePointer(root, ref), new Set(), ref === '#')) {
        if (next === start) recursive.add(start);
        else queue.push(next);
      }
    }
  }
  return recursive;
}

/** Calls `visit` on every schema object of a strict schema, depth first, with its JSON pointer (enum lists and annotations are not entered). */
function eachNode(node: unknown, path: string, visit: (node: SchemaObject, path: string) => void): void {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) eachNode(item, `${path}/${index}`, visit);
    return;
  }
  if (!isJsonObject(node)) return;
  visit(node, path);
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'enum' && key !== 'description' && key !== 'title') eachNode(value, `${path}/${key}`, visit);
  }
}

/**
 * Throws when a strict schema passes one of OpenAI's documented limits (MODEL-16): a refused schema
 * would only step the format down. Past an enum or character limit the error names the parts
 * whose encoding brings the schema within it (the largest first); past others, or when such a part
 * is the root, none.
 */
function checkOpenAILimits(strict: SchemaObject, origins: ReadonlyMap<object, Origin>): void {
  const limits = OPENAI_STRICT_LIMITS;
  const enums: Array<{ node: SchemaObject; path: string; values: number; characters: number }> = [];
  const objects: Array<{ node: SchemaObject; path: string; characters: number }> = [];
  const large: Array<{ node: SchemaObject; why: string }> = [];
  eachNode(strict, '#', (node, path) => {
    if (isJsonObject(node.properties)) objects.push({ node, path, characters: Object.keys(node.properties).reduce((sum, name) => sum + name.length, 0) });
    if (!Array.isArray(node.enum)) return;
    const strings = node.enum.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : 0), 0);
    const characters = node.enum.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : JSON.stringify(value).length), 0);
    enums.push({ node, path, values: node.enum.length, characters });
    if (node.enum.length > limits.largeEnum && strings > limits.largeEnumCharacters) {
      large.push({
        node,
        why: `${origins.get(node)?.path ?? path} has ${node.enum.length} enum values totalling ${strings} characters, more than OpenAI's ${limits.largeEnumCharacters} for an enum of more than ${limits.largeEnum} values`,
      });
    }
  });
  const sum = (parts: Array<{ [key: string]: unknown }>, key: string) => parts.reduce((total, part) => total + (part[key] as number), 0);
  const culprits = new Map<object, string>(large.map(({ node, why }) => [node, why]));
  const pick = (candidates: Array<{ node: SchemaObject; size: number }>, excess: number, why: string): void => {
    for (const { node, size } of [...candidates].sort((left, right) => right.size - left.size)) {
      if (excess <= 0) return;
      if (culprits.has(node)) continue;
      culprits.set(node, why);
      excess -= size;
    }
  };
  const values = sum(enums, 'values');
  if (values > limits.enumValues) {
    pick(
      enums.map(({ node, values: size }) => ({ node, size })),
      values - limits.enumValues,
      `the schema has ${values} enum values, more than OpenAI's ${limits.enumValues} in total`,
    );
  }
  const characters = sum(enums, 'characters') + sum(objects, 'characters');
  if (characters > limits.characters) {
    pick(
      [...enums, ...objects].map(({ node, characters: size }) => ({ node, size })),
      characters - limits.characters,
      `the schema has ${characters} characters of property names and enum values, more than OpenAI's ${limits.characters} in total`,
    );
  }
  if (culprits.size === 0) return;
  const [first, why] = [...culprits][0] as [object, string];
  const parts = [...culprits].map(([node, reason]) => [origins.get(node), reason] as const);
  // A part that is the root, or was not built from an original node, cannot travel encoded: not strict.
  const encodable = parts.every(([origin]) => origin !== undefined && origin.path !== '#');
  throw new NotStrict(
    why,
    origins.get(first)?.path ?? '#',
    false,
    encodable ? new Map(parts.map(([origin, reason]) => [(origin as Origin).node, reason])) : undefined,
  );
}

/** Throws when a strict tool schema passes one of Anthropic's documented limits (MODEL-15). */
function checkAnthropicLimits(strict: SchemaObject): void {
  const limits = ANTHROPIC_STRICT_LIMITS;
  let optional = 0;
  let unions = 0;
  eachNode(strict, '#', (node, path) => {
    if (!isJsonObject(node.properties)) return;
    const required = Array.isArray(node.required) ? node.required : [];
    for (const [name, property] of Object.entries(node.properties)) {
      if (!required.includes(name)) optional += 1;
      if (isJsonObject(property) && (Array.isArray(property.anyOf) || Array.isArray(property.type))) unions += 1;
    }
    if (optional > limits.optionalParameters)
      throw new NotStrict(`the schema has more than Anthropic's ${limits.optionalParameters} optional properties`, path, false);
    if (unions > limits.unionParameters)
      throw new NotStrict(`the schema has more than Anthropic's ${limits.unionParameters} properties with unions`, path, false);
  });
}

/** Merges an `allOf` with json-schema-merge-allof; an impossible merge (or one through `$ref`) is not strict. */
function mergeIntersection(node: SchemaObject, path: string): SchemaObject {
  if (JSON.stringify(node.allOf).includes('"$ref"')) throw new NotStrict(`${path}/allOf refers to definitions`, path);
  const merged = mergedOrUndefined(node);
  if (merged === undefined) throw new NotStrict(`${path}/allOf cannot be merged`, path);
  return merged;
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
 * optional property whose original schema does not accept `null` is removed, and a JSON-encoded
 * string standing for a part of `encodedNodes` (MODEL-14) is decoded (a string that is not JSON is
 * left as it is, for the core's validation to refuse). Unions pick the first branch the mapped
 * value fits; everything else is kept as it is.
 */
export function fromStrictValue(value: unknown, originalSchema: JsonSchema, encodedNodes: ReadonlySet<object> = NO_ENCODED): unknown {
  return mapBack(value, originalSchema, originalSchema, 0, encodedNodes);
}

function mapBack(value: unknown, schema: unknown, root: unknown, hops: number, encoded: ReadonlySet<object>): unknown {
  if (!isJsonObject(schema) || hops > 32) return value;
  if (encoded.has(schema)) return typeof value === 'string' ? decoded(value) : value;
  let result = value;
  if (typeof schema.$ref === 'string') {
    const target = resolvePointer(root, schema.$ref);
    if (target !== undefined) result = mapBack(result, target, root, hops + 1, encoded);
  }
  if (Array.isArray(schema.allOf)) {
    const merged = mergedOrUndefined(schema);
    if (merged) return mapBack(result, merged, root, hops + 1, encoded);
  }
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches) {
    for (const branch of branches) {
      const candidate = mapBack(result, branch, root, 0, encoded);
      if (fits(candidate, branch, root, 0)) {
        result = candidate;
        break;
      }
    }
  }
  if (Array.isArray(result) && isJsonObject(schema.items)) {
    const items = schema.items;
    result = result.map((item) => mapBack(item, items, root, 0, encoded));
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
      entries.push([name, mapBack(item, property, root, 0, encoded)]);
    }
    result = Object.fromEntries(entries);
  }
  return result;
}

/** The value a JSON-encoded string holds (MODEL-14), parsed safely; the string itself when it holds no JSON. */
function decoded(text: string): unknown {
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

// json-schema-merge-allof (CommonJS, lodash under it) is loaded on the first allOf merged, not by every run (CLI-32).
const require = createRequire(import.meta.url);

const mergedCache = new WeakMap<object, SchemaObject | null>();

function mergedOrUndefined(schema: SchemaObject): SchemaObject | undefined {
  if (!mergedCache.has(schema)) {
    try {
      const mergeAllOf = require('json-schema-merge-allof') as typeof import('json-schema-merge-allof');
      mergedCache.set(schema, mergeAllOf(schema as Parameters<typeof mergeAllOf>[0]) as SchemaObject);
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
