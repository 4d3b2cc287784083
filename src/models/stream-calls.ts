/** Delivers a Solution's calls to `ModelRequest.onCall` as they stream in: only calls that cannot be rejected later by what came before them (LOOP-11). */
import { parseJson } from '../protocol/json.js';
import { compileSchema } from '../protocol/schemas.js';
import type { Call, JsonSchema } from '../protocol/types.js';
import { CallsStreamParser } from './incremental-json.js';
import type { ModelRequest } from '../protocol/model.js';
import { isJsonObject } from '../protocol/types.js';

/**
 * Feeds streamed answer text to a CallsStreamParser and calls `request.onCall(call, index)` for a
 * call as soon as it is complete, when the answer so far is a valid prefix of a Solution: the
 * answer cut after that call (its `calls` array closed there) validates against the Solution
 * schema with nothing required and no minimum number of calls — so the call validates against its
 * tool's schema, every call before it did too, and every other property written before it is
 * valid (spec/loop.md LOOP-11), and it keeps the request's rules beyond the schema (`check`, such as
 * the advisors that must speak before any call, spec/advisors.md ADV-5). Once a prefix fails,
 * nothing more starts early. `finish` delivers the calls not delivered yet, only when the whole
 * answer validates against the Solution schema and keeps its rules.
 */
export class StreamedCalls {
  private readonly parser = new CallsStreamParser();
  private readonly delivered = new Set<number>();
  private text = '';
  private blocked = false;
  /** How many elements of `calls` have been judged and let through, so the index the next one must have. */
  private judged = 0;

  /**
   * @param request whose `onCall` receives the calls (nothing happens without one); its `schema` judges them.
   * @param mapAnswer turns (part of) an answer into what the caller sees (e.g. strict-schema nulls removed).
   */
  constructor(
    private readonly request: ModelRequest,
    private readonly mapAnswer: (value: unknown) => unknown = (value) => value,
  ) {}

  /** How many calls have been delivered to `onCall`. */
  get count(): number {
    return this.delivered.size;
  }

  /** Feeds a text delta of the answer. */
  push(delta: string): void {
    if (!this.request.onCall || this.blocked) return;
    this.text += delta;
    for (const completed of this.parser.push(delta)) {
      // The parser skips an element that is not JSON: what follows it belongs to an answer that cannot be valid.
      const call =
        completed.index !== this.judged ? undefined : completed.index === 0 ? this.firstCall(completed.end) : this.nextCall(completed.value, completed.index);
      if (call === undefined) {
        this.blocked = true;
        return;
      }
      this.judged += 1;
      this.deliver(call, completed.index);
    }
  }

  /**
   * The first call, when the answer up to it is a valid prefix: everything written before `calls`
   * is judged here, once, since nothing later can change it.
   */
  private firstCall(end: number): unknown {
    const prefix = parseJson(`${this.text.slice(this.parser.objectStart, end)}]}`);
    const answer = prefix.ok ? this.mapAnswer(prefix.value) : undefined;
    if (!isJsonObject(answer) || !Array.isArray(answer.calls) || !prefixValidator(this.request.schema)?.(answer)) return undefined;
    if ((this.request.check?.(answer) ?? []).length > 0) return undefined;
    return answer.calls[0];
  }

  /**
   * A later call, judged alone (what came before it was judged already), so a long answer costs
   * time linear in its length: valid as the only call of a prefix, and within the calls' maximum.
   */
  private nextCall(value: unknown, index: number): unknown {
    const answer = this.mapAnswer({ calls: [value] });
    if (!isJsonObject(answer) || !Array.isArray(answer.calls) || !prefixValidator(this.request.schema)?.(answer)) return undefined;
    const maxItems = callsSchemaOf(this.request.schema)?.maxItems;
    if (typeof maxItems === 'number' && index + 1 > maxItems) return undefined;
    return answer.calls[0];
  }

  /** Delivers the calls of the final (already mapped) answer not delivered yet, when the answer is valid. */
  finish(solution: unknown): void {
    if (!this.request.onCall || !isJsonObject(solution) || !Array.isArray(solution.calls)) return;
    if (!validator(this.request.schema)?.(solution) || (this.request.check?.(solution) ?? []).length > 0) return;
    solution.calls.forEach((call: unknown, index: number) => {
      if (!this.delivered.has(index)) this.deliver(call, index);
    });
  }

  private deliver(call: unknown, index: number): void {
    if (!isJsonObject(call)) return;
    this.delivered.add(index);
    this.request.onCall?.(call as Call, index);
  }
}

/** Calls `request.onCall` for each call of a valid answer, in order (the replay model's delivery). */
export function emitCalls(solution: unknown, request: ModelRequest): void {
  new StreamedCalls(request).finish(solution);
}

type Validate = ReturnType<typeof compileSchema>;

const prefixSchemas = new WeakMap<object, JsonSchema>();

/** The Solution schema's validator, or undefined when the schema does not compile. */
function validator(schema: JsonSchema): Validate | undefined {
  try {
    return compileSchema(schema);
  } catch {
    return undefined;
  }
}

/** The schema of the Solution's `calls`, when it has one. */
function callsSchemaOf(schema: JsonSchema): Record<string, unknown> | undefined {
  if (!isJsonObject(schema) || !isJsonObject(schema.properties)) return undefined;
  return isJsonObject(schema.properties.calls) ? schema.properties.calls : undefined;
}

/** The validator of answer prefixes: the Solution schema with nothing required at the top and no minimum number of calls. */
function prefixValidator(schema: JsonSchema): Validate | undefined {
  if (!isJsonObject(schema)) return validator(schema);
  let prefix = prefixSchemas.get(schema);
  if (!prefix) {
    const properties = isJsonObject(schema.properties) ? schema.properties : {};
    const calls = isJsonObject(properties.calls) ? { ...properties.calls } : properties.calls;
    if (isJsonObject(calls)) {
      delete calls.minItems;
      delete calls.contains;
    }
    prefix = { ...schema, required: [], properties: { ...properties, ...(calls === undefined ? {} : { calls }) } } as JsonSchema;
    prefixSchemas.set(schema, prefix);
  }
  return validator(prefix);
}
