/** Call-level `_scopes`: a focus hint on latent calls (SCOPE-11, act 015's disambiguation), refused on explicit calls that would widen their tool's (SCOPE-10). */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { checkCallScopes } from '../../src/protocol/context/scopes.js';
import { modelToolSchema } from '../../src/protocol/tools/tools.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { JsonSchema, ToolSchema } from '../../src/protocol/types.js';
import { normalizeTool } from '../../src/protocol/tools/normalize-tool.js';

const sendMessage: ToolSchema = normalizeTool({
  description: 'Sends a message to a user.',
  properties: { recipientId: { type: 'string' }, message: { type: 'string' } },
  _output: { type: 'object', properties: { sent: { type: 'boolean' } } },
});

const propertiesOf = (schema: JsonSchema) => (schema as { properties: Record<string, JsonSchema> }).properties;

describe('the _scopes hint in the schema the model sees (SCOPE-11)', () => {
  it('offers latent tools a _scopes hint, just before the _output it guides', () => {
    const keys = Object.keys(propertiesOf(modelToolSchema('sendMessage', sendMessage, false)));
    expect(keys.indexOf('_scopes')).toBe(keys.indexOf('_output') - 1);
    const hint = propertiesOf(modelToolSchema('sendMessage', sendMessage, false))._scopes as { description: string };
    expect(hint).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(hint.description).toContain('focus hint');
    expect(hint.description).toContain('grants nothing');
  });

  it('offers the hint to a latent tool without _output too, and never to an explicit one', () => {
    const plain = normalizeTool({ properties: { text: { type: 'string' } } });
    expect(propertiesOf(modelToolSchema('note', plain, false))._scopes).toMatchObject({ type: 'array' });
    expect(propertiesOf(modelToolSchema('note', plain, true))._scopes).toBeUndefined();
  });

  it("keeps a tool's own _scopes: hidden when fixed, its own schema when the model may choose", () => {
    const fixed = normalizeTool({ ...sendMessage, _scopes: ['input'] });
    expect(propertiesOf(modelToolSchema('sendMessage', fixed, false))._scopes).toBeUndefined();
    const requested = { type: 'array', items: { enum: ['state', 'input'] } };
    const chosen = normalizeTool({ ...sendMessage, properties: { ...sendMessage.properties, _scopes: requested } });
    expect(propertiesOf(modelToolSchema('sendMessage', chosen, false))._scopes).toEqual(requested);
  });
});

describe('checkCallScopes (SCOPE-10, SCOPE-11)', () => {
  const call = (scopes: unknown) => ({ _tool: 't', _scopes: scopes as string[] });
  /** A tool fixing `_scopes` (a list, the top-level shorthand) or declaring a wider schema for them (an object). */
  const tool = (scopes?: unknown): ToolSchema =>
    normalizeTool(Array.isArray(scopes) ? { properties: {}, _scopes: scopes } : { properties: scopes === undefined ? {} : { _scopes: scopes as JsonSchema } });

  it('accepts well-formed scopes as a hint on a latent call whose tool declares none, and refuses malformed ones (SCOPE-1)', () => {
    expect(() => checkCallScopes(call(['input', 'state.user', 'history']), tool(), true)).not.toThrow();
    expect(() => checkCallScopes(call(['state..x']), tool(), true)).toThrow(/Expected a scope/);
    expect(() => checkCallScopes(call('input'), tool(), true)).toThrow(/must be a list of scopes/);
  });

  it('refuses, naming the rule, explicit calls asking for scopes their tool does not declare, fixes otherwise, or does not admit', () => {
    const refusal = /spec\/scopes\.md SCOPE-10/;
    expect(() => checkCallScopes(call(['state']), tool(), false)).toThrow(refusal);
    expect(() => checkCallScopes(call(['state', 'input']), tool(['state']), false)).toThrow(refusal);
    expect(() => checkCallScopes(call(['input']), tool({ type: 'array', items: { enum: ['state'] } }), false)).toThrow(refusal);
    expect(() => checkCallScopes(call(['state']), tool(['state']), false)).not.toThrow();
    expect(() => checkCallScopes(call(['state']), tool({ type: 'array', items: { enum: ['state', 'input'] } }), false)).not.toThrow();
  });

  it('carries the code and the rule in the error', () => {
    try {
      checkCallScopes(call(['state']), tool(), false);
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_params', data: { toolName: 't', rule: 'SCOPE-10' } });
      return;
    }
    throw new Error('Expected a refusal.');
  });
});

describe("act 015's disambiguation example (SCOPE-11)", () => {
  const document = {
    meta: { name: 'welcome' },
    context: [
      { type: 'state', currentUser: { id: 'user_A', name: 'Alice' } },
      { type: 'input', mentionedUser: { id: 'user_B', name: 'Bob' }, instruction: 'Send a welcome message to the user mentioned above.' },
      // A strict tool: the hint must pass even where no other property may.
      { type: 'tool', tool: { sendMessage: { ...sendMessage, additionalProperties: false } } },
    ],
    schema: { type: 'string' },
  };

  it('accepts the latent call with its hint, traces it with the call, and runs it without a re-ask', async () => {
    const hinted = { _tool: 'sendMessage', _scopes: ['input'], recipientId: 'user_B', message: 'Welcome, Bob!', _output: { sent: true } };
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ ...hinted, _outputPath: '†state.sent' }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'Welcomed Bob.' } },
    ]);
    const sink = memorySink();
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('Welcomed Bob.');
    expect(model.requests).toHaveLength(2);
    expect(sink.events.filter((event) => event.event === 'call.failed')).toEqual([]);
    expect(sink.events.find((event) => event.event === 'call.started')?.params).toMatchObject({ _scopes: ['input'] });
    const schema = JSON.stringify(model.requests[0]?.schema);
    expect(schema).toContain('focus hint');
    // The next prompt shows the call with its hint, in the plan its step became (PLAN-11).
    const next = (model.requests[1]?.messages ?? []).map((message) => message.content).join('\n');
    expect(next).toContain('"_scopes":["input"]');
  });

  it('fails a latent call whose hint is not a scope with invalid_params, which the model sees', async () => {
    const model = new ReplayModel([
      {
        match: { step: 0 },
        solution: { calls: [{ _tool: 'sendMessage', _scopes: ['input.'], recipientId: 'user_B', message: 'Hi', _output: { sent: true } }], output: null },
      },
      { match: { step: 1, contains: 'invalid_params' }, solution: { calls: [], output: 'gave up' } },
    ]);
    const sink = memorySink();
    const runtime = new Runtime();
    const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('gave up');
    expect(sink.events.find((event) => event.event === 'call.failed')?.error).toMatchObject({ code: 'invalid_params' });
  });
});
