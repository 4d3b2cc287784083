/** Property tests of normalisation: loading is idempotent, and shorthand documents mean (and render) what their canonical forms do. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { renderContext } from '../../src/protocol/messages/render-context.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { collectTools, composeSolutionSchema } from '../../src/protocol/tools/tools.js';
import type { RequestDocument } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

type Json = Record<string, unknown>;

/**
 * One generated message: its shorthand form, the canonical form it must normalise to, and the
 * markers that rendering must show (empty for messages that do not render as text).
 */
interface Pair {
  short: Json;
  canon: Json;
  shown: string[];
}

/** Builds a pair from the message's index in the document and a random tag (markers are unique per document). */
type PairBuilder = (index: number, tag: string) => Pair;

const marker = (index: number, tag: string, what: string) => `MARK_${index}_${what}_${tag}`;

const ROLES = ['system', 'user', 'assistant'] as const;
const INSTANCES = [undefined, 'alpha', 'beta'] as const;

const instanceOf = (instance: string | undefined): Json => (instance === undefined ? {} : { _instance: instance });

/** Plain turns: `{type, message}`, `{role, content}`, `{type, content}` or the canonical `{type, text}`. */
const turnArbitrary: fc.Arbitrary<PairBuilder> = fc
  .record({ role: fc.constantFrom(...ROLES), form: fc.constantFrom('message', 'roleContent', 'typeContent', 'text') })
  .map(({ role, form }) => (index, tag) => {
    const text = marker(index, tag, 'turn');
    const short =
      form === 'message'
        ? { type: role, message: text }
        : form === 'roleContent'
          ? { role, content: text }
          : form === 'typeContent'
            ? { type: role, content: text }
            : { type: role, text };
    return { short, canon: { type: role, text }, shown: [text] };
  });

/** `text` messages with an optional role, written with `message`, `content` or `text`. */
const textArbitrary: fc.Arbitrary<PairBuilder> = fc
  .record({ role: fc.constantFrom(undefined, ...ROLES), field: fc.constantFrom('message', 'content', 'text') })
  .map(({ role, field }) => (index, tag) => {
    const text = marker(index, tag, 'text');
    const withRole = role === undefined ? {} : { role };
    return { short: { type: 'text', ...withRole, [field]: text }, canon: { type: 'text', text, ...withRole }, shown: [text] };
  });

/** `data` messages, with or without `kind` (no kind = kind `data`), description, schema and instance. */
const dataArbitrary: fc.Arbitrary<PairBuilder> = fc
  .record({
    kind: fc.constantFrom(undefined, 'data', 'notes', 'facts'),
    instance: fc.constantFrom(...INSTANCES),
    described: fc.boolean(),
    withSchema: fc.boolean(),
    count: fc.integer({ min: -5, max: 5 }),
  })
  .map(({ kind, instance, described, withSchema, count }) => (index, tag) => {
    const value = marker(index, tag, 'data');
    const data = { [`d${index}`]: value, [`n${index}`]: count };
    const extras: Json = {
      ...(described ? { description: `Description ${index}.` } : {}),
      ...(withSchema ? { schema: { type: 'object' } } : {}),
      ...instanceOf(instance),
    };
    return {
      short: { type: 'data', ...(kind === undefined ? {} : { kind }), data, ...extras },
      canon: { type: 'data', kind: kind ?? 'data', data, ...extras },
      shown: [value],
    };
  });

/** `input` and `state` messages in the flat form (fields beside `type`) or wrapped; `input` also as a template slot. */
const flatArbitrary = (type: 'input' | 'state'): fc.Arbitrary<PairBuilder> =>
  fc
    .record({
      form: fc.constantFrom('flat', 'wrapped', ...(type === 'input' ? (['slot'] as const) : [])),
      fields: fc.integer({ min: 1, max: 3 }),
      instance: fc.constantFrom(...INSTANCES),
      withSchema: fc.boolean(),
      described: fc.boolean(),
    })
    .map(({ form, fields, instance, withSchema, described }) => (index, tag) => {
      const extras: Json = {
        ...(withSchema || form === 'slot' ? { schema: { type: 'object', description: `schema ${index}` } } : {}),
        ...(described ? { description: `About ${type} ${index}.` } : {}),
        ...instanceOf(instance),
      };
      if (form === 'slot') return { short: { type, ...extras }, canon: { type, ...extras }, shown: [] };
      const value: Json = {};
      const shown: string[] = [];
      for (let field = 0; field < fields; field++) {
        const text = marker(index, tag, `${type}${field}`);
        value[`${type[0]}${index}_${field}`] = text;
        shown.push(text);
      }
      const canon = { type, [type]: value, ...extras };
      return { short: form === 'flat' ? { type, ...value, ...extras } : canon, canon, shown };
    });

/** `meta` messages, flat or wrapped. */
const metaArbitrary: fc.Arbitrary<PairBuilder> = fc.boolean().map((flat) => (index, tag) => {
  const name = marker(index, tag, 'meta');
  const meta = { name, version: `${index}.0.0` };
  return { short: flat ? { type: 'meta', ...meta } : { type: 'meta', meta }, canon: { type: 'meta', meta }, shown: [name] };
});

const SCOPE_POOL = ['state', 'input', 'history', 'system', 'state.a', 'notes'];

/** Tools with top-level `_delegate`/`_scopes`/`_activity`/`_output` shorthands and no explicit `type`. */
const toolArbitrary: fc.Arbitrary<PairBuilder> = fc
  .record({
    delegate: fc.constantFrom(undefined, 'anonymous', './child.json'),
    activity: fc.constantFrom(undefined, 'act'),
    scopes: fc.option(fc.subarray(SCOPE_POOL), { nil: undefined }),
    output: fc.constantFrom(undefined, { type: 'string' }, { type: 'object', properties: { ok: { type: 'boolean' } } }),
    required: fc.boolean(),
    explicitType: fc.boolean(),
  })
  .map(({ delegate, activity, scopes, output, required, explicitType }) => (index, tag) => {
    const name = `tool${index}`;
    const properties: Json = { p: { type: 'string', description: marker(index, tag, 'param') } };
    const common: Json = { description: marker(index, tag, 'tool'), ...(required ? { required: ['p'] } : {}) };
    const short: Json = { ...(explicitType ? { type: 'object' } : {}), ...common, properties: { ...properties } };
    const canonProperties: Json = { ...properties };
    if (delegate !== undefined) {
      short._delegate = delegate;
      canonProperties._delegate = { const: delegate };
    }
    if (activity !== undefined) {
      short._activity = activity;
      canonProperties._activity = { const: activity };
    }
    if (scopes !== undefined) {
      short._scopes = scopes;
      canonProperties._scopes = { const: scopes };
    }
    if (output !== undefined) {
      short._output = output;
      canonProperties._output = output;
    }
    const canonTool = { type: 'object', ...common, properties: canonProperties };
    return { short: { type: 'tool', tool: { [name]: short } }, canon: { type: 'tool', tool: { [name]: canonTool } }, shown: [] };
  });

/** Plans without `mode` (eager by default) or with an explicit one. */
const planArbitrary: fc.Arbitrary<PairBuilder> = fc
  .record({ mode: fc.constantFrom(undefined, 'eager', 'lazy'), calls: fc.integer({ min: 0, max: 3 }) })
  .map(({ mode, calls }) => (index, tag) => {
    const list = Array.from({ length: calls }, (_, call) => ({ _tool: 'planned', note: marker(index, tag, `call${call}`) }));
    const shown = list.map((call) => call.note);
    return {
      short: { type: 'plan', ...(mode === undefined ? {} : { mode }), calls: list },
      canon: { type: 'plan', mode: mode ?? 'eager', calls: list },
      shown,
    };
  });

const messageArbitrary = fc.oneof(
  turnArbitrary,
  textArbitrary,
  dataArbitrary,
  flatArbitrary('input'),
  flatArbitrary('state'),
  metaArbitrary,
  toolArbitrary,
  planArbitrary,
);

interface Generated {
  short: Json;
  canon: Json;
  shown: string[];
}

const documentArbitrary: fc.Arbitrary<Generated> = fc
  .record({ builders: fc.array(messageArbitrary, { minLength: 1, maxLength: 10 }), tag: fc.stringMatching(/^[a-z0-9]{6}$/), named: fc.boolean() })
  .map(({ builders, tag, named }) => {
    const pairs = builders.map((build, index) => build(index, tag));
    const base = { ...(named ? { meta: { name: 'normal' } } : {}), schema: { type: 'string' } };
    return {
      short: { ...base, context: pairs.map((pair) => pair.short) },
      canon: { ...base, context: pairs.map((pair) => pair.canon) },
      shown: pairs.flatMap((pair) => pair.shown),
    };
  });

/** What the model would see of a context: the rendered messages and the composed Solution schema. */
function seen(document: RequestDocument, runtime: Runtime) {
  // What the model sees is data; the answer's rules (a function) are compared by what they say of an answer instead.
  const { checkAnswer, ...rendered } = renderContext(document.context, defaultHandlers(), document.config ?? {});
  const schema = composeSolutionSchema(collectTools(document.context), document.schema, (name) => runtime.hasActivity(name), rendered.solutionProperties);
  return { rendered, schema, unfinished: checkAnswer({ calls: [], output: 'done' }) };
}

describe('normalisation', () => {
  it('is idempotent: a loaded document fed back through validate loads to the same canonical document', () => {
    const runtime = new Runtime();
    fc.assert(
      fc.property(documentArbitrary, ({ short }) => {
        const once = runtime.validate(structuredClone(short)).document;
        const twice = runtime.validate(JSON.parse(JSON.stringify(once)) as unknown).document;
        expect(twice).toStrictEqual(once);
      }),
      settings,
    );
  });

  it('turns every shorthand form into exactly the canonical form it stands for', () => {
    const runtime = new Runtime();
    fc.assert(
      fc.property(documentArbitrary, ({ short, canon }) => {
        const fromShort = runtime.validate(structuredClone(short)).document;
        const fromCanon = runtime.validate(structuredClone(canon)).document;
        expect(fromShort).toEqual(canon);
        expect(fromCanon).toEqual(canon);
      }),
      settings,
    );
  });

  it('never changes what the model sees: shorthand and canonical documents render identically and show every value', () => {
    const runtime = new Runtime({ activities: { act: () => null } });
    fc.assert(
      fc.property(documentArbitrary, ({ short, canon, shown }) => {
        const fromShort = seen(runtime.validate(structuredClone(short)).document, runtime);
        const fromCanon = seen(runtime.validate(structuredClone(canon)).document, runtime);
        expect(fromShort).toStrictEqual(fromCanon);
        const text = fromShort.rendered.messages.map((message) => message.content).join('\n');
        for (const mark of shown) expect(text).toContain(mark);
        // A value block always holds a value (a template slot, global or per instance, renders no empty block).
        expect(text).not.toMatch(/```json\n(?:undefined)?\n```/);
      }),
      settings,
    );
  });

  it('keeps each built-in handler normaliser idempotent on the forms it accepts', () => {
    const handlers = defaultHandlers();
    fc.assert(
      fc.property(documentArbitrary, ({ short }) => {
        for (const message of short.context as Json[]) {
          const type = String(message.type ?? message.role);
          const normalize = handlers.get(type)?.normalize;
          if (!normalize) continue;
          const typed = { ...message, type };
          const once = normalize(structuredClone(typed));
          expect(normalize(structuredClone(once))).toStrictEqual(once);
        }
      }),
      settings,
    );
  });
});
