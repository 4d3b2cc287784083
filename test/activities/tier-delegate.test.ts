/** The built-in delegate tool (spec/delegate-tool.md DEL-23 to DEL-28): gating, tier → model, typed outcomes, context, tools and its trace fields. */
import { describe, expect, it } from 'vitest';
import type { CassetteEntry } from '../../src/models/cassette.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { RequestDocument } from '../../src/protocol/types.js';
import { eventsOf, offeredTools, promptOf, replayRun, tierRuntime } from '../helpers/tier-runtime.js';

/** A planner on `model` with state, input, a system turn and two tools of its own. */
function planner(config: Record<string, unknown> = { model: 'openai:gpt-5' }, extra: Record<string, unknown>[] = []): RequestDocument {
  return {
    meta: { name: 'planner' },
    config,
    context: [
      { type: 'system', text: 'PLANNER-SYSTEM: plan, then delegate.' },
      { type: 'state', state: { notes: 'NOTES-1', secret: 'SECRET-1' } },
      { type: 'input', input: { topic: 'TOPIC-1' } },
      {
        type: 'tool',
        tool: {
          lookup: { type: 'object', description: 'Looks up.', properties: { q: { type: 'string' } }, _output: { type: 'string' } },
          format: { type: 'object', description: 'Formats.', properties: { text: { type: 'string' } }, _output: { type: 'string' } },
        },
      },
      ...extra,
    ],
    schema: { type: 'string' },
  } as unknown as RequestDocument;
}

/** A planner answer with one delegate call written at †state.result, then an answer ending the run. */
function plannerEntries(call: Record<string, unknown>): CassetteEntry[] {
  return [
    { match: { request: 'planner', step: 0 }, solution: { calls: [{ _tool: 'delegate', _outputPath: '†state.result', ...call }], output: null } },
    { match: { request: 'planner', step: 1 }, solution: { calls: [], output: 'done' } },
  ];
}

const minimal = { tier: 'fast', task: 'TASK: rename x to y', context: { mode: 'minimal' } };
const worker = (answer: Record<string, unknown>, extra: Partial<CassetteEntry> = {}): CassetteEntry => ({
  match: { request: 'anonymous:delegate' },
  solution: { calls: [], output: null, ...answer },
  ...extra,
});

/** The delegate call's result, as the planner's context holds it. */
function resultOf(events: readonly Record<string, unknown>[]): unknown {
  return eventsOf(events as never, 'call.completed').find((event) => event.tool === 'delegate')?.result;
}

describe('offering the delegate tool (DEL-23, DEL-24)', () => {
  it('offers it to a run whose model may delegate: in the Solution schema, with the catalog tiers, and in the prompt', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [{ match: { request: 'planner' }, solution: { calls: [], output: 'x' } }]);
    const request = eventsOf(events, 'model.request')[0];
    expect(offeredTools(request)).toEqual(['delegate', 'lookup', 'format']);
    expect(JSON.stringify(request?.schema)).toContain('"enum":["fast","balanced","deep"]');
    expect(promptOf(request)).toContain('with the tool "delegate" (tiers: fast, balanced, deep)');
  });

  it('does not offer it to a model without can_delegate, where a call to it is unknown_tool', async () => {
    const plan = { type: 'plan', calls: [{ _tool: 'delegate', ...minimal, _outputPath: '†state.result' }] };
    const { events } = await replayRun(tierRuntime(), planner({ model: 'openai:gpt-4.1-mini' }, [plan]), [
      { match: { request: 'planner' }, solution: { calls: [], output: 'x' } },
    ]);
    const request = eventsOf(events, 'model.request')[0];
    expect(offeredTools(request)).toEqual(['lookup', 'format']);
    expect(promptOf(request)).not.toContain('with the tool "delegate"');
    expect(eventsOf(events, 'call.failed')[0]).toMatchObject({ tool: 'delegate', error: { code: 'unknown_tool' } });
  });

  it('re-asks an answer calling delegate when it is not offered (LOOP-8)', async () => {
    const { events } = await replayRun(tierRuntime(), planner({ model: 'openai:gpt-4.1-mini' }), [
      { match: { request: 'planner', step: 0 }, solution: { calls: [{ _tool: 'delegate', ...minimal }], output: null } },
      { match: { request: 'planner', step: 0 }, solution: { calls: [], output: 'x' } },
    ]);
    expect(eventsOf(events, 'model.request').map((event) => event.attempt)).toEqual([0, 1]);
    expect(eventsOf(events, 'delegate.started')).toEqual([]);
  });

  it('does not offer it when the document sets config.delegation: false', async () => {
    const { events } = await replayRun(tierRuntime(), planner({ model: 'openai:gpt-5', delegation: false }), [
      { match: { request: 'planner' }, solution: { calls: [], output: 'x' } },
    ]);
    expect(offeredTools(eventsOf(events, 'model.request')[0])).toEqual(['lookup', 'format']);
  });

  it('gates by the model the document names or its tier, and an unknown model may not delegate', async () => {
    for (const [config, offered] of [
      [{ tier: 'deep' }, true],
      [{ tier: 'fast' }, false],
      [{ model: 'openai:not-in-the-catalog' }, false],
      [{}, false],
    ] as const) {
      const { events } = await replayRun(tierRuntime(), planner(config), [{ match: { request: 'planner' }, solution: { calls: [], output: 'x' } }]);
      expect(offeredTools(eventsOf(events, 'model.request')[0]).includes('delegate'), JSON.stringify(config)).toBe(offered);
    }
  });

  it('gates a replayed run by the model its cassette entries were recorded with, when the document names none (CAS-15)', async () => {
    const recorded = (model: string) => [{ match: { request: 'planner' }, solution: { calls: [], output: 'x' }, model }];
    const deep = await replayRun(tierRuntime(), planner({}), recorded('anthropic:claude-opus-4-7'));
    expect(offeredTools(eventsOf(deep.events, 'model.request')[0])).toContain('delegate');
    const fast = await replayRun(tierRuntime(), planner({}), recorded('anthropic:claude-haiku-4-5'));
    expect(offeredTools(eventsOf(fast.events, 'model.request')[0])).not.toContain('delegate');
  });

  it('is never offered by a runtime without a tier catalog', async () => {
    const runtime = new Runtime();
    const { ReplayModel } = await import('../../src/models/replay.js');
    const { Tracer, memorySink } = await import('../../src/protocol/trace/trace.js');
    const sink = memorySink();
    await runtime.run(planner(), { model: new ReplayModel([{ solution: { calls: [], output: 'x' } }]), tracer: new Tracer([sink]) });
    expect(offeredTools(eventsOf(sink.events, 'model.request')[0])).toEqual(['lookup', 'format']);
  });

  it("lets the document's own delegate tool replace the built-in one", async () => {
    const own = { type: 'tool', tool: { delegate: { type: 'object', description: 'MY-OWN-DELEGATE', properties: {}, _output: { type: 'string' } } } };
    const { events } = await replayRun(tierRuntime(), planner(undefined, [own]), [{ match: { request: 'planner' }, solution: { calls: [], output: 'x' } }]);
    const request = eventsOf(events, 'model.request')[0];
    expect(offeredTools(request)).toEqual(['lookup', 'format', 'delegate']);
    expect(JSON.stringify(request?.schema)).toContain('MY-OWN-DELEGATE');
    expect(promptOf(request)).not.toContain('with the tool "delegate"');
  });

  it('is never offered inside a worker, even on a model that may delegate', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [...plannerEntries({ ...minimal, tier: 'deep' }), worker({ output: 'renamed' })]);
    const workerRequest = eventsOf(events, 'model.request').find((event) => event.depth === 1);
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ model: 'openai:gpt-5' });
    expect(offeredTools(workerRequest)).toEqual(['lookup', 'format', 'need_context']);
  });

  it('is offered inside a worker when the planner sets config.delegation.recursive, still bounded by the depth', async () => {
    const recursive = planner({ model: 'openai:gpt-5', delegation: { recursive: true } });
    const nested = { tier: 'deep', task: 'NESTED: go deeper', context: { mode: 'minimal' } };
    const { events } = await replayRun(
      tierRuntime(),
      recursive,
      [
        ...plannerEntries({ ...minimal, tier: 'deep' }),
        {
          match: { request: 'anonymous:delegate', step: 0, contains: 'TASK' },
          solution: { calls: [{ _tool: 'delegate', ...nested, _outputPath: '†output' }], output: null },
        },
        { match: { request: 'anonymous:delegate', step: 1 }, solution: { calls: [], output: 'gave up' } },
      ],
      { maxDepth: 1 },
    );
    const workerRequest = eventsOf(events, 'model.request').find((event) => event.depth === 1);
    expect(offeredTools(workerRequest)).toEqual(['delegate', 'lookup', 'format', 'need_context']);
    // The nested delegation would start a run at depth 2: an outcome, with no child run (DEL-2).
    const nestedResult = eventsOf(events, 'call.completed').find((event) => event.depth === 1)?.result as { error: string };
    expect(nestedResult.error).toMatch(/^worker_error: max_depth_exceeded: /);
    expect(eventsOf(events, 'run.started').map((event) => event.depth)).toEqual([0, 1]);
    expect(eventsOf(events, 'delegate.failed').find((event) => event.depth === 1)).toMatchObject({
      child: null,
      code: 'max_depth_exceeded',
      failureMode: 'worker_error',
    });
  });
});

describe('tier → model (DEL-28)', () => {
  it("runs the worker on the tier's model, the caller's provider first, never the planner's model", async () => {
    const { events } = await replayRun(tierRuntime(), planner({ model: 'anthropic:claude-opus-4-7' }), [
      ...plannerEntries(minimal),
      worker({ output: 'renamed' }),
    ]);
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ tier: 'fast', model: 'anthropic:claude-haiku-4-5' });
    expect(eventsOf(events, 'delegate.completed')[0]).toMatchObject({ usage: { model: 'anthropic:claude-haiku-4-5' } });
  });

  it('takes a --tier override before the catalog', async () => {
    const { events } = await replayRun(tierRuntime({ tiers: { fast: 'openai:gpt-4.1-nano' } }), planner(), [
      ...plannerEntries(minimal),
      worker({ output: 'ok' }),
    ]);
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ model: 'openai:gpt-4.1-nano' });
  });

  it('offers every tier of the protocol, even one the catalog has no model of, which answers no_model_available_for_tier', async () => {
    const catalog = { models: { 'openai:gpt-5': { tier: 'deep' as const, can_delegate: true }, 'openai:gpt-4.1': { tier: 'balanced' as const } } };
    const { events, result } = await replayRun(tierRuntime({ catalog }), planner(), plannerEntries(minimal));
    expect(JSON.stringify(eventsOf(events, 'model.request')[0]?.schema)).toContain('"enum":["fast","balanced","deep"]');
    expect(result.ok).toBe(true);
    expect((resultOf(events) as { error: string }).error).toMatch(/^no_model_available_for_tier: No model of tier "fast"/);
    expect(eventsOf(events, 'delegate.failed')).toEqual([
      expect.objectContaining({ child: null, code: 'no_model_available_for_tier', failureMode: 'no_model_available_for_tier' }),
    ]);
  });

  it('answers no_model_available_for_tier, with no child run, when no model of the tier can be used here', async () => {
    // The only fast model is of a provider this runtime cannot create.
    const catalog = { models: { 'openai:gpt-5': { tier: 'deep' as const, can_delegate: true }, 'mystery:tiny': { tier: 'fast' as const } } };
    const { events, result } = await replayRun(tierRuntime({ catalog }), planner(), plannerEntries(minimal));
    expect(result.ok).toBe(true);
    const outcome = resultOf(events) as { success: boolean; output: unknown; error: string };
    expect(outcome).toMatchObject({ success: false, output: null });
    expect(outcome.error).toMatch(/^no_model_available_for_tier: No model of tier "fast"/);
    expect(eventsOf(events, 'run.started')).toHaveLength(1);
    expect(eventsOf(events, 'delegate.started')).toEqual([]);
    // Every failed outcome is traced, one that starts no child run too (TRACE-17).
    expect(eventsOf(events, 'delegate.failed')).toEqual([
      expect.objectContaining({ child: null, code: 'no_model_available_for_tier', failureMode: 'no_model_available_for_tier' }),
    ]);
  });
});

describe('typed outcomes (DEL-26)', () => {
  it('returns {success, output, error} with the worker output, a string by default, and keeps usage out of the planner context', async () => {
    const { events, result } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries(minimal),
      worker({ output: 'renamed' }, { usage: { inputTokens: 123456, outputTokens: 654321 } }),
    ]);
    expect(result.ok).toBe(true);
    expect(resultOf(events)).toEqual({ success: true, output: 'renamed', error: null });
    const next = promptOf(eventsOf(events, 'model.request').filter((event) => event.depth === 0)[1]);
    expect(next).toContain('"success":true');
    expect(next).not.toMatch(/123456|654321|inputTokens|costUsd/);
  });

  it('returns the JSON value an output_schema describes', async () => {
    const schema = { type: 'object', properties: { renamed: { type: 'integer' } }, required: ['renamed'] };
    const { events } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries({ ...minimal, output_schema: schema }),
      worker({ output: { renamed: 3 } }),
    ]);
    expect(resultOf(events)).toEqual({ success: true, output: { renamed: 3 }, error: null });
  });

  it('answers output_schema_validation_failed with the raw output after the worker re-asks', async () => {
    const schema = { type: 'object', properties: { renamed: { type: 'integer' } }, required: ['renamed'] };
    const { events } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries({ ...minimal, output_schema: schema }),
      worker({ output: { renamed: 'three' } }, { repeat: true }),
    ]);
    const workerAsks = eventsOf(events, 'model.request').filter((event) => event.depth === 1);
    expect(workerAsks.map((event) => event.attempt)).toEqual([0, 1, 2]);
    const result = resultOf(events) as { success: boolean; output: unknown; error: string };
    expect(result).toMatchObject({ success: false, output: { renamed: 'three' } });
    expect(result.error).toMatch(/^output_schema_validation_failed: /);
    expect(eventsOf(events, 'delegate.failed')[0]).toMatchObject({ code: 'invalid_model_output', failureMode: 'output_schema_validation_failed' });
  });

  it('answers insufficient_context with the need_context request as the output, and ends the worker at once', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries(minimal),
      worker({ calls: [{ _tool: 'need_context', missing: ['†state.notes'], why: 'The notes name the symbol.' }] }),
    ]);
    const request = { missing: ['†state.notes'], why: 'The notes name the symbol.' };
    expect(resultOf(events)).toEqual({ success: false, output: request, error: 'insufficient_context: The notes name the symbol.' });
    expect(eventsOf(events, 'delegate.failed')[0]).toMatchObject({
      code: 'insufficient_context',
      failureMode: 'insufficient_context',
      insufficientContextRequest: request,
    });
    expect(eventsOf(events, 'model.request').filter((event) => event.depth === 1)).toHaveLength(1);
    expect(eventsOf(events, 'run.failed')[0]).toMatchObject({ depth: 1, code: 'insufficient_context' });
  });

  it('answers max_tokens_exceeded when the provider cut the answer, the part that arrived as the output', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries({ ...minimal, max_tokens: 5 }),
      { match: { request: 'anonymous:delegate' }, text: '{"calls": [], "output": "renam', cut: true },
    ]);
    const result = resultOf(events) as { success: boolean; output: unknown; error: string };
    expect(result).toMatchObject({ success: false, output: '{"calls": [], "output": "renam' });
    expect(result.error).toMatch(/^max_tokens_exceeded: .*length limit of 5 output tokens/);
    expect(eventsOf(events, 'delegate.failed')[0]).toMatchObject({ failureMode: 'max_tokens_exceeded' });
  });

  it('answers worker_error with the code and message of anything else', async () => {
    const { events, result } = await replayRun(tierRuntime(), planner(), plannerEntries(minimal));
    expect(result.ok).toBe(true);
    const outcome = resultOf(events) as { success: boolean; output: unknown; error: string };
    expect(outcome).toMatchObject({ success: false, output: null });
    expect(outcome.error).toMatch(/^worker_error: model_error: No entry of the replay cassette/);
    expect(eventsOf(events, 'delegate.failed')[0]).toMatchObject({ failureMode: 'worker_error' });
  });

  it('answers cancelled_by_user when the run tree is cancelled during the worker', async () => {
    const controller = new AbortController();
    const running = replayRun(tierRuntime(), planner(), [...plannerEntries(minimal), worker({ output: 'late' }, { delayMs: 10_000 })], {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 200);
    const { events, result } = await running;
    expect(result.ok || result.error.code).toBe('cancelled_by_user');
    expect(resultOf(events)).toEqual({ success: false, output: null, error: 'cancelled_by_user' });
    expect(eventsOf(events, 'delegate.failed')[0]).toMatchObject({ failureMode: 'cancelled_by_user' });
  });
});

describe('what a worker gets (DEL-25)', () => {
  it('lends the allowed tools of the caller, drops delegate and unknown names and records them', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [
      ...plannerEntries({ ...minimal, allowed_tools: ['lookup', 'delegate', 'nope'] }),
      worker({ output: 'ok' }),
    ]);
    expect(offeredTools(eventsOf(events, 'model.request').find((event) => event.depth === 1))).toEqual(['lookup', 'need_context']);
    // allowedToolCount counts the names asked for, dropped ones included (TRACE-17).
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ allowedToolCount: 3, droppedTools: ['delegate', 'nope'] });
  });

  it("lends no tool the caller's tool rules forbid, and the built-in delegate tool obeys them too (TOOL-21)", async () => {
    const rules = { model: 'openai:gpt-5', toolRules: [{ tool: 'form*', allowed: false }] };
    const { events } = await replayRun(tierRuntime(), planner(rules), [...plannerEntries(minimal), worker({ output: 'ok' })]);
    expect(offeredTools(eventsOf(events, 'model.request')[0])).toEqual(['delegate', 'lookup']);
    expect(offeredTools(eventsOf(events, 'model.request').find((event) => event.depth === 1))).toEqual(['lookup', 'need_context']);
    const forbidden = await replayRun(tierRuntime(), planner({ model: 'openai:gpt-5', toolRules: [{ tool: 'delegate', allowed: false }] }), [
      { match: { request: 'planner' }, solution: { calls: [], output: 'x' } },
    ]);
    expect(offeredTools(eventsOf(forbidden.events, 'model.request')[0])).toEqual(['lookup', 'format']);
    expect(promptOf(eventsOf(forbidden.events, 'model.request')[0])).not.toContain('with the tool "delegate"');
  });

  it("lends all the caller's own tools when allowed_tools is absent", async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [...plannerEntries(minimal), worker({ output: 'ok' })]);
    expect(offeredTools(eventsOf(events, 'model.request').find((event) => event.depth === 1))).toEqual(['lookup', 'format', 'need_context']);
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ allowedToolCount: 2, droppedTools: [] });
  });

  it('shows the worker only the task in minimal mode', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [...plannerEntries(minimal), worker({ output: 'ok' })]);
    const prompt = promptOf(eventsOf(events, 'model.request').find((event) => event.depth === 1));
    expect(prompt).toContain('TASK: rename x to y');
    expect(prompt).not.toMatch(/PLANNER-SYSTEM|NOTES-1|SECRET-1|TOPIC-1/);
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({ contextMode: 'minimal', contextReferenceCount: 0, scopes: [] });
  });

  it('shows the worker the included references and kinds, and nothing else', async () => {
    const explicit = { ...minimal, context: { mode: 'explicit', include: ['†state.notes', 'input', 'system'] } };
    const { events } = await replayRun(tierRuntime(), planner(), [...plannerEntries(explicit), worker({ output: 'ok' })]);
    const prompt = promptOf(eventsOf(events, 'model.request').find((event) => event.depth === 1));
    expect(prompt).toMatch(/NOTES-1[\s\S]*TOPIC-1[\s\S]*PLANNER-SYSTEM[\s\S]*TASK: rename/);
    expect(prompt).not.toContain('SECRET-1');
    expect(eventsOf(events, 'delegate.started')[0]).toMatchObject({
      contextMode: 'explicit',
      contextReferenceCount: 3,
      scopes: ['†state.notes', 'input', 'system'],
      taskTokens: Math.ceil('TASK: rename x to y'.length / 4),
    });
    // The call's context is traced as written: its references name context.
    expect(eventsOf(events, 'call.started')[0]).toMatchObject({ params: { context: explicit.context } });
  });

  it('waits for an included reference that a call of the same step writes', async () => {
    const explicit = { ...minimal, context: { mode: 'explicit', include: ['†state.fresh'] } };
    const { events } = await replayRun(tierRuntime(), planner(), [
      {
        match: { request: 'planner', step: 0 },
        solution: {
          calls: [
            { _tool: 'delegate', ...explicit, _outputPath: '†state.result' },
            { _tool: 'format', text: 'x', _output: 'FRESH-1', _outputPath: '†state.fresh' },
          ],
          output: null,
        },
      },
      { match: { request: 'planner', step: 1 }, solution: { calls: [], output: 'done' } },
      worker({ output: 'ok' }),
    ]);
    expect(promptOf(eventsOf(events, 'model.request').find((event) => event.depth === 1))).toContain('FRESH-1');
  });

  it('fails a call whose included reference never resolves with unresolved_reference when the step ends (VAR-5)', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), plannerEntries({ ...minimal, context: { mode: 'explicit', include: ['†state.never'] } }));
    expect(eventsOf(events, 'call.failed')[0]).toMatchObject({
      tool: 'delegate',
      error: { code: 'unresolved_reference', message: expect.stringContaining('†state.never') },
    });
    expect(eventsOf(events, 'run.started')).toHaveLength(1);
  });

  it('re-asks an answer whose delegate call breaks the tool schema: a tier outside the catalog, an explicit context without include (LOOP-8)', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), [
      { match: { request: 'planner', step: 0 }, solution: { calls: [{ _tool: 'delegate', ...minimal, tier: 'huge' }], output: null } },
      { match: { request: 'planner', step: 0 }, solution: { calls: [{ _tool: 'delegate', ...minimal, context: { mode: 'explicit' } }], output: null } },
      { match: { request: 'planner', step: 0 }, solution: { calls: [], output: 'gave up delegating' } },
    ]);
    const asks = eventsOf(events, 'model.request');
    expect(asks.map((event) => event.attempt)).toEqual([0, 1, 2]);
    expect(promptOf(asks[1])).toContain('does not match the Solution schema');
    expect(eventsOf(events, 'run.started')).toHaveLength(1);
  });

  it('refuses to include tools through the context: they are lent by allowed_tools', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), plannerEntries({ ...minimal, context: { mode: 'explicit', include: ['tool'] } }));
    expect(eventsOf(events, 'call.failed')[0]).toMatchObject({ tool: 'delegate', error: { code: 'invalid_params' } });
    expect(eventsOf(events, 'run.started')).toHaveLength(1);
  });

  it('fails a call whose output_schema is not a schema with invalid_params', async () => {
    const { events } = await replayRun(tierRuntime(), planner(), plannerEntries({ ...minimal, output_schema: { type: 'no-such-type' } }));
    const failed = eventsOf(events, 'call.failed')[0] as unknown as { error: { code: string; message: string } };
    expect(failed.error.code).toBe('invalid_params');
    expect(failed.error.message).toContain('output_schema: Expected a valid JSON Schema');
  });

  it('gives the worker max_tokens as its config.maxTokens', async () => {
    const { model } = await replayRun(tierRuntime(), planner(), [...plannerEntries({ ...minimal, max_tokens: 64 }), worker({ output: 'ok' })]);
    expect(model.requests.find((request) => request.requestName === 'anonymous:delegate')?.config.maxTokens).toBe(64);
  });
});
