/** Unit tests of src/protocol/tools/tools.ts: collecting tools (TOOL-4), meta-properties (TOOL-3, TOOL-17), the model-facing schema (TOOL-6) and the Solution schema (TOOL-7). */
import { describe, expect, it } from 'vitest';
import { normalizeTool } from '../../src/protocol/tools/normalize-tool.js';
import { compileSchema } from '../../src/protocol/schemas.js';
import {
  TOOL_META_PROPERTIES,
  answersInPlainText,
  answersWithOutputObject,
  callValidationSchema,
  collectTools,
  composeSolutionSchema,
  offersCalls,
  withoutEmptyCalls,
  isExplicitTool,
  metaConst,
  metaSchema,
  metaValue,
  modelToolSchema,
} from '../../src/protocol/tools/tools.js';
import type { JsonSchema, Message, ToolSchema } from '../../src/protocol/types.js';

type ObjectSchema = { [keyword: string]: unknown; properties: Record<string, JsonSchema>; required: string[] };
const none = () => false;
const asObject = (schema: JsonSchema) => schema as ObjectSchema;

describe('collectTools (TOOL-4)', () => {
  it('collects every tool of every tool message, in definition order', () => {
    const context: Message[] = [
      { type: 'tool', tool: { a: { type: 'object' }, b: { type: 'object' } } },
      { type: 'user', text: 'x' },
      { type: 'tool', tool: { c: { type: 'object' } } },
    ];
    expect([...collectTools(context).keys()]).toEqual(['a', 'b', 'c']);
  });

  it('lets the last definition of a name win and moves the tool to the end', () => {
    const latest: ToolSchema = { type: 'object', description: 'latest' };
    const context: Message[] = [
      { type: 'tool', tool: { a: { type: 'object', description: 'first' }, b: { type: 'object' } } },
      { type: 'tool', tool: { a: latest } },
    ];
    const tools = collectTools(context);
    expect([...tools.keys()]).toEqual(['b', 'a']);
    expect(tools.get('a')).toBe(latest);
  });

  it('adds to a given map, so tools appended during a run join the earlier ones', () => {
    const tools = collectTools([{ type: 'tool', tool: { a: { type: 'object' }, b: { type: 'object' } } }]);
    const same = collectTools([{ type: 'tool', tool: { a: { type: 'object', description: 'redefined' }, c: { type: 'object' } } }], tools);
    expect(same).toBe(tools);
    expect([...tools.keys()]).toEqual(['b', 'a', 'c']);
  });
});

describe('meta-properties (TOOL-3, TOOL-17)', () => {
  const tool = normalizeTool({
    _delegate: './fixed.json',
    properties: { _activity: { enum: ['fast', 'slow'] }, _outputMethod: { const: 'push' }, x: { type: 'string' } },
  });

  it('reads the schema a tool declares for a meta-property', () => {
    expect(metaSchema(tool, '_activity')).toEqual({ enum: ['fast', 'slow'] });
    expect(metaSchema(tool, '_scopes')).toBeUndefined();
  });

  it('reads a fixed value only from a const', () => {
    expect(metaConst(tool, '_delegate')).toBe('./fixed.json');
    expect(metaConst(tool, '_activity')).toBeUndefined();
    expect(metaConst(tool, '_scopes')).toBeUndefined();
    expect(metaConst({ properties: { _approval: true } }, '_approval')).toBeUndefined();
  });

  it('reads a fixed value whatever the call carries', () => {
    expect(metaValue({ _tool: 't', _delegate: './other.json' }, tool, '_delegate')).toBe('./fixed.json');
    expect(metaValue({ _tool: 't', _outputMethod: 'set' }, tool, '_outputMethod')).toBe('push');
  });

  it('reads a chosen value from the call when the tool declares a wider schema', () => {
    expect(metaValue({ _tool: 't', _activity: 'slow' }, tool, '_activity')).toBe('slow');
  });

  it.each(TOOL_META_PROPERTIES.filter((key) => key !== '_delegate' && key !== '_activity'))(
    'ignores %s on a call when the tool does not declare it: a call cannot choose what runs it',
    (key) => {
      expect(metaValue({ _tool: 't', [key]: ['state'] }, tool, key)).toBeUndefined();
    },
  );

  it('ignores _delegate and _activity on a call of a tool that declares neither', () => {
    const plain: ToolSchema = { type: 'object', properties: { x: { type: 'string' } } };
    expect(metaValue({ _tool: 't', _delegate: './evil.json' }, plain, '_delegate')).toBeUndefined();
    expect(metaValue({ _tool: 't', _activity: 'shell' }, plain, '_activity')).toBeUndefined();
  });

  it('reads call-level meta-properties from the call whatever the tool declares', () => {
    const plain: ToolSchema = { type: 'object', properties: {} };
    expect(metaValue({ _tool: 't', _instance: 'fr' }, plain, '_instance')).toBe('fr');
    expect(metaValue({ _tool: 't', _outputPath: '†state.x' }, plain, '_outputPath')).toBe('†state.x');
  });

  it('lists the meta-properties that decide how a call runs', () => {
    expect([...TOOL_META_PROPERTIES].sort()).toEqual(['_activity', '_approval', '_delegate', '_resolve', '_scopes']);
  });
});

describe('isExplicitTool (TOOL-5)', () => {
  it('is explicit with _activity or _delegate declared with any schema, or a registered Activity of its name', () => {
    expect(isExplicitTool('t', { properties: { _activity: { const: 'x' } } }, none)).toBe(true);
    expect(isExplicitTool('t', { properties: { _delegate: { type: 'string' } } }, none)).toBe(true);
    expect(isExplicitTool('t', { properties: {} }, (name) => name === 't')).toBe(true);
  });

  it('is latent otherwise', () => {
    expect(isExplicitTool('t', { properties: { _output: { type: 'string' }, _scopes: { const: ['state'] } } }, (name) => name === 'other')).toBe(false);
  });
});

describe('modelToolSchema (TOOL-6)', () => {
  const latent = normalizeTool({
    description: 'Advises.',
    properties: { weather: { type: 'object' }, days: { type: 'integer' } },
    required: ['weather', '_output'],
    additionalProperties: false,
    _output: { type: 'object', required: ['go'] },
  });

  it('fixes _tool to the name and keeps description, other keywords and required parameters', () => {
    const schema = asObject(modelToolSchema('advise', latent, false));
    expect(schema.type).toBe('object');
    expect(schema.properties._tool).toEqual({ const: 'advise' });
    expect(schema.description).toBe('Advises.');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['_tool', 'weather', '_output']);
  });

  it('lets each parameter be its own schema or a †reference string', () => {
    const schema = asObject(modelToolSchema('advise', latent, false));
    expect(schema.properties.days).toEqual({ anyOf: [{ type: 'integer' }, expect.objectContaining({ type: 'string', pattern: '^†' })] });
    const validate = compileSchema(schema);
    const base = { _tool: 'advise', weather: {}, _output: { go: true } };
    expect(validate({ ...base, days: 3 })).toBe(true);
    expect(validate({ ...base, days: '†state.days' })).toBe(true);
    expect(validate({ ...base, days: 'three' })).toBe(false);
  });

  it('shows a parameter that takes any string as it is, since a reference is a string it takes already (TOOL-23)', () => {
    const tool: ToolSchema = {
      type: 'object',
      properties: {
        task: { type: 'string', description: 'The task.' },
        code: { type: 'string', pattern: '^[A-Z]+$' },
        mode: { type: 'string', enum: ['a', 'b'] },
      },
    };
    const schema = asObject(modelToolSchema('work', tool, true));
    expect(schema.properties.task).toEqual({ type: 'string', description: 'The task.' });
    expect(schema.properties.code).toEqual({ anyOf: [{ type: 'string', pattern: '^[A-Z]+$' }, expect.objectContaining({ pattern: '^†' })] });
    expect(schema.properties.mode).toEqual({ anyOf: [{ type: 'string', enum: ['a', 'b'] }, expect.objectContaining({ pattern: '^†' })] });
    const validate = compileSchema(schema);
    expect(validate({ _tool: 'work', task: '†input.task', code: '†state.code', mode: '†state.mode' })).toBe(true);
    expect(validate({ _tool: 'work', task: 'anything', code: 'lower', mode: 'a' })).toBe(false);
  });

  it('keeps _output and requires it for a latent tool that declares it', () => {
    const schema = asObject(modelToolSchema('advise', latent, false));
    expect(schema.properties._output).toEqual({ type: 'object', required: ['go'] });
    expect(schema.required).toContain('_output');
    expect(compileSchema(schema)({ _tool: 'advise', weather: {} })).toBe(false);
  });

  it('does not require _output of a latent tool that does not declare it', () => {
    const schema = asObject(modelToolSchema('note', normalizeTool({ properties: { text: { type: 'string' } } }), false));
    expect(schema.properties).not.toHaveProperty('_output');
    expect(schema.required).toEqual(['_tool']);
  });

  it('removes _output from an explicit tool: the model gives inputs only', () => {
    const schema = asObject(modelToolSchema('advise', latent, true));
    expect(schema.properties).not.toHaveProperty('_output');
    expect(schema.required).toEqual(['_tool', 'weather']);
  });

  it('hides fixed meta-properties and shows chosen ones with their schemas', () => {
    const tool = normalizeTool({
      _delegate: './secret.json',
      _scopes: ['state'],
      _approval: 'required',
      properties: { _activity: { enum: ['fast', 'slow'] }, _resolve: { enum: ['runtime', 'upfront'] } },
    });
    const schema = asObject(modelToolSchema('t', tool, true));
    for (const hidden of ['_delegate', '_scopes', '_approval']) expect(schema.properties).not.toHaveProperty(hidden);
    expect(schema.properties._activity).toEqual({ enum: ['fast', 'slow'] });
    expect(schema.properties._resolve).toEqual({ enum: ['runtime', 'upfront'] });
    expect(JSON.stringify(schema)).not.toContain('secret.json');
  });

  it('keeps required meta-properties out of the required list', () => {
    const tool = normalizeTool({ properties: { _scopes: { type: 'array' }, x: { type: 'string' } }, required: ['x', '_scopes', '_tool'] });
    expect(asObject(modelToolSchema('t', tool, true)).required).toEqual(['_tool', 'x']);
  });

  it('offers _reasoningForCall, _outputPath and _outputMethod on every tool', () => {
    const schema = asObject(modelToolSchema('t', normalizeTool({}), true));
    expect(Object.keys(schema.properties).sort()).toEqual(['_outputMethod', '_outputPath', '_reasoningForCall', '_tool']);
    expect(schema.properties._outputMethod).toMatchObject({ enum: ['set', 'merge', 'assign', 'push', 'concat'] });
    expect(schema.properties._outputPath).toMatchObject({ type: 'string', pattern: '^†' });
  });

  it('does not offer a call-level meta-property the tool declares itself', () => {
    const tool = normalizeTool({ properties: { _outputPath: { const: '†state.fixed' }, _outputMethod: { enum: ['push'] } } });
    const schema = asObject(modelToolSchema('t', tool, true));
    expect(schema.properties).not.toHaveProperty('_outputPath');
    expect(schema.properties._outputMethod).toEqual({ enum: ['push'] });
  });

  it('offers _instance as an enum of the instances, only when there are any (DATA-6)', () => {
    expect(asObject(modelToolSchema('t', normalizeTool({}), true)).properties).not.toHaveProperty('_instance');
    const schema = asObject(modelToolSchema('t', normalizeTool({}), true, ['de', 'fr']));
    expect(schema.properties._instance).toMatchObject({ enum: ['de', 'fr'] });
  });

  it('tells the model which context to rely on for a latent tool with fixed _scopes (SCOPE-8)', () => {
    const withDescription = asObject(modelToolSchema('t', normalizeTool({ description: 'Summarizes.', _scopes: ['state', 'input'] }), false));
    expect(withDescription.description).toBe('Summarizes. When you write _output, rely only on: state, input.');
    const without = asObject(modelToolSchema('t', normalizeTool({ _scopes: ['state'] }), false));
    expect(without.description).toBe('When you write _output, rely only on: state.');
  });

  it('adds no scope hint to explicit tools, chosen scopes or empty scopes', () => {
    expect(asObject(modelToolSchema('t', normalizeTool({ description: 'D.', _scopes: ['state'] }), true)).description).toBe('D.');
    expect(asObject(modelToolSchema('t', normalizeTool({ description: 'D.', properties: { _scopes: { type: 'array' } } }), false)).description).toBe('D.');
    expect(asObject(modelToolSchema('t', normalizeTool({ description: 'D.', _scopes: [] }), false)).description).toBe('D.');
  });

  it('does not change the tool it is given', () => {
    const tool = normalizeTool({ description: 'D.', _scopes: ['state'], properties: { x: { type: 'string' } } });
    const copy = structuredClone(tool);
    modelToolSchema('t', tool, false, ['fr']);
    expect(tool).toEqual(copy);
  });
});

describe('callValidationSchema (TOOL-11)', () => {
  const tool = normalizeTool({
    properties: { city: { type: 'string' }, _scopes: { type: 'array', items: { enum: ['state'] } } },
    required: ['city', '_output'],
    _delegate: './w.json',
    _output: { type: 'object' },
  });
  const validate = compileSchema(callValidationSchema('weather', tool));

  it('validates parameters with the tool schema, not with references allowed', () => {
    expect(validate({ _tool: 'weather', city: 'Oslo' })).toBe(true);
    expect(validate({ _tool: 'weather', city: 3 })).toBe(false);
    expect(validate({ _tool: 'weather' })).toBe(false);
  });

  it('checks the tool name and the fixed meta-properties', () => {
    expect(validate({ _tool: 'other', city: 'Oslo' })).toBe(false);
    expect(validate({ _tool: 'weather', city: 'Oslo', _delegate: './w.json' })).toBe(true);
    expect(validate({ _tool: 'weather', city: 'Oslo', _delegate: './other.json' })).toBe(false);
    expect(validate({ _tool: 'weather', city: 'Oslo', _scopes: ['secret'] })).toBe(false);
  });

  it('checks the call-level meta-properties of any call', () => {
    expect(
      validate({ _tool: 'weather', city: 'Oslo', _instance: 'fr', _id: 'a', _reasoningForCall: 'r', _outputPath: '†state.w', _outputMethod: 'merge' }),
    ).toBe(true);
    expect(validate({ _tool: 'weather', city: 'Oslo', _outputMethod: 'append' })).toBe(false);
    expect(validate({ _tool: 'weather', city: 'Oslo', _outputPath: 'state.w' })).toBe(false);
    expect(validate({ _tool: 'weather', city: 'Oslo', _instance: 3 })).toBe(false);
  });

  it('leaves _output out: a latent result is checked against the tool _output separately', () => {
    const schema = asObject(callValidationSchema('weather', tool));
    expect(schema.properties).not.toHaveProperty('_output');
    expect(schema.required).toEqual(['city']);
  });
});

describe('composeSolutionSchema (TOOL-7, DOC-7)', () => {
  const tools = new Map<string, ToolSchema>([
    ['greet', normalizeTool({ properties: { name: { type: 'string' } }, required: ['name'], _output: { type: 'string' } })],
    ['send', normalizeTool({ properties: { to: { type: 'string' } } })],
  ]);
  const output = { type: 'object', properties: { done: { type: 'boolean' } }, required: ['done'] };

  it('offers the tools as anyOf their model-facing schemas, explicit or latent by the registry', () => {
    const schema = composeSolutionSchema(tools, output, (name) => name === 'send') as { properties: { calls: { items: { anyOf: JsonSchema[] } } } };
    expect(schema.properties.calls.items.anyOf).toEqual([
      modelToolSchema('greet', tools.get('greet')!, false),
      modelToolSchema('send', tools.get('send')!, true),
    ]);
  });

  it('requires calls and output and allows no other property', () => {
    const validate = compileSchema(composeSolutionSchema(tools, output, none));
    expect(validate({ calls: [], output: null })).toBe(true);
    expect(validate({ calls: [] })).toBe(false);
    expect(validate({ output: null })).toBe(false);
    expect(validate({ calls: [], output: null, note: 'x' })).toBe(false);
  });

  it('makes output nullable and otherwise valid against the Request schema', () => {
    const validate = compileSchema(composeSolutionSchema(tools, output, none));
    expect(validate({ calls: [], output: { done: true } })).toBe(true);
    expect(validate({ calls: [], output: { done: 'yes' } })).toBe(false);
  });

  // Embedded under properties.output.anyOf, the Request schema's `#/$defs/...` must still resolve.
  it('keeps the local $refs of the Request schema resolvable (DOC-5, TOOL-7)', () => {
    const withDefinitions = { $defs: { name: { type: 'string' } }, type: 'object', properties: { name: { $ref: '#/$defs/name' } } };
    const validate = compileSchema(composeSolutionSchema(tools, withDefinitions, none));
    expect(validate({ calls: [], output: { name: 'Ada' } })).toBe(true);
    expect(validate({ calls: [], output: { name: 1 } })).toBe(false);
  });

  it('accepts any output when the Request schema is true', () => {
    const schema = composeSolutionSchema(tools, true, none) as { properties: { output: JsonSchema } };
    expect(schema.properties.output).toBe(true);
    const validate = compileSchema(schema);
    expect(validate({ calls: [], output: 'anything' })).toBe(true);
    expect(validate({ calls: [], output: null })).toBe(true);
  });

  it('refuses a call naming a tool that is not offered, or a latent call without _output', () => {
    const validate = compileSchema(composeSolutionSchema(tools, output, none));
    expect(validate({ calls: [{ _tool: 'greet', name: 'Ada', _output: 'Hi' }, { _tool: 'send' }], output: null })).toBe(true);
    expect(validate({ calls: [{ _tool: 'delete_everything' }], output: null })).toBe(false);
    expect(validate({ calls: [{ _tool: 'greet', name: 'Ada' }], output: null })).toBe(false);
  });

  it('leaves calls out altogether when there are no tools (TOOL-22)', () => {
    const schema = composeSolutionSchema(new Map(), output, none);
    const validate = compileSchema(schema);
    expect(offersCalls(schema)).toBe(false);
    expect(schema).toMatchObject({ required: ['output'] });
    expect(validate({ output: null })).toBe(true);
    expect(validate({ calls: [{ _tool: 'x' }], output: null })).toBe(false);
    expect(validate(withoutEmptyCalls({ calls: [], output: null }, schema))).toBe(true);
    expect(withoutEmptyCalls({ calls: [{ _tool: 'x' }], output: null }, schema)).toEqual({ calls: [{ _tool: 'x' }], output: null });
    expect(offersCalls(composeSolutionSchema(tools, output, none))).toBe(true);
  });

  it('says a Solution is plain text only for an unconstrained string output with nothing beside it (MSG-28)', () => {
    expect(answersInPlainText(composeSolutionSchema(new Map(), { type: 'string' }, none))).toBe(true);
    expect(answersInPlainText(composeSolutionSchema(tools, { type: 'string' }, none))).toBe(false);
    expect(answersInPlainText(composeSolutionSchema(new Map(), { type: 'string', description: 'A haiku.' }, none))).toBe(false);
    expect(answersInPlainText(composeSolutionSchema(new Map(), { type: 'string', minLength: 3 }, none))).toBe(false);
    expect(answersInPlainText(composeSolutionSchema(new Map(), { enum: ['yes', 'no'] }, none))).toBe(false);
    expect(answersInPlainText(composeSolutionSchema(new Map(), output, none))).toBe(false);
    expect(answersInPlainText(composeSolutionSchema(new Map(), { type: 'string' }, none, { meta: { type: 'object' } }))).toBe(false);
  });

  it('says a Solution may be the output object alone only for an object output with nothing beside it (MSG-32)', () => {
    const object = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    expect(answersWithOutputObject(composeSolutionSchema(new Map(), object, none), object)).toBe(true);
    expect(answersWithOutputObject(composeSolutionSchema(tools, object, none), object)).toBe(false);
    expect(answersWithOutputObject(composeSolutionSchema(new Map(), object, none, { meta: { type: 'object' } }), object)).toBe(false);
    for (const other of [
      { type: 'string' },
      { type: 'array' },
      { enum: [{}] },
      true,
      { type: 'object', anyOf: [object, { type: 'object' }] },
      { $ref: '#/$defs/x' },
    ]) {
      expect(answersWithOutputObject(composeSolutionSchema(new Map(), other, none), other)).toBe(false);
    }
  });

  it('adds the properties handlers contribute, such as meta (MSG-17)', () => {
    const validate = compileSchema(composeSolutionSchema(tools, output, none, { meta: { type: 'object' } }));
    expect(validate({ calls: [], output: null, meta: { version: '2' } })).toBe(true);
    expect(validate({ calls: [], output: null })).toBe(true);
    expect(validate({ calls: [], output: null, meta: 'v2' })).toBe(false);
  });

  it('offers the instances on every tool', () => {
    const validate = compileSchema(composeSolutionSchema(tools, output, none, {}, ['fr']));
    expect(validate({ calls: [{ _tool: 'send', _instance: 'fr' }], output: null })).toBe(true);
    expect(validate({ calls: [{ _tool: 'send', _instance: 'de' }], output: null })).toBe(false);
  });
});
