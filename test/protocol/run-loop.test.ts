import { describe, expect, it } from 'vitest';
import type { Model, ModelRequest } from '../../src/protocol/model.js';
import { zeroUsage } from '../../src/protocol/usage.js';
import { ReplayModel } from '../../src/models/replay.js';
import { MAX_NESTING_DEPTH } from '../../src/protocol/json.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call } from '../../src/protocol/types.js';
import { readFileSync } from 'node:fs';

const loopDocument = (extra: object[] = [], schema: object = { type: 'string' }) => ({
  meta: { name: 'loop' },
  context: [
    { type: 'system', text: 'You help.' },
    { type: 'tool', tool: { echo: { description: 'Echoes.', properties: { text: { type: 'string' } }, required: ['text'] } } },
    ...extra,
  ],
  schema,
});

function traced() {
  const sink = memorySink();
  return { tracer: new Tracer([sink]), events: sink.events };
}

describe('the execution loop', () => {
  it('completes a fully planned Request with no model call', async () => {
    const runtime = new Runtime();
    const loaded = runtime.parse(readFileSync('requests/plan/welcome.json', 'utf8'), 'requests/plan/welcome.json');
    const { tracer, events } = traced();
    const result = await runtime.run(loaded, { input: { name: 'Ada' }, tracer });
    expect(result.ok).toBe(true);
    expect(result.ok && result.output).toEqual({ title: 'Welcome aboard, Ada!', team: 'Platform' });
    expect(events.some((event) => event.event === 'model.request')).toBe(false);
  });

  it('runs an Activity with its resolved parameters and writes the result at the output path', async () => {
    const seen: Call[] = [];
    const runtime = new Runtime({
      activities: {
        echo: (call) => {
          seen.push(call);
          return `echo:${String(call.text)}`;
        },
      },
    });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'echo', text: '†input.word', _outputPath: '†state.echoed' }], output: null } },
      { match: { step: 1, contains: 'echo:hi' }, solution: { calls: [], output: 'done: echo:hi' } },
    ]);
    const result = await runtime.run(runtime.validate(loopDocument()), { model, input: { word: 'hi' } });
    expect(result.ok && result.output).toBe('done: echo:hi');
    expect(seen[0]?.text).toBe('hi');
  });

  it('runs unblocked calls of one step in parallel', async () => {
    const sleep: Activity = (call) => new Promise((resolve) => setTimeout(() => resolve(call.text), 300));
    const runtime = new Runtime({ activities: { echo: sleep } });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: ['a', 'b', 'c'].map((text) => ({ _tool: 'echo', text })), output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'ok' } },
    ]);
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument()), { model, tracer });
    expect(result.ok).toBe(true);
    const order = events.filter((event) => event.event.startsWith('call.')).map((event) => event.event);
    expect(order).toEqual(['call.started', 'call.started', 'call.started', 'call.completed', 'call.completed', 'call.completed']);
  });

  it('re-asks an invalid answer within the same step, then accepts a valid one', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([
      { match: { step: 0 }, text: 'not json at all' },
      { match: { step: 0 }, solution: { calls: [], output: 42 } },
      { match: { step: 0 }, solution: { calls: [], output: 'fine' } },
    ]);
    const result = await runtime.run(runtime.validate(loopDocument()), { model });
    expect(result.ok && result.output).toBe('fine');
    expect(model.requests.map((request) => request.step)).toEqual([0, 0, 0]);
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/does not match the Solution schema/);
  });

  it('fails with invalid_model_output after two re-asks', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([{ match: { step: 0 }, text: '{', repeat: true }]);
    const result = await runtime.run(runtime.validate(loopDocument()), { model });
    expect(!result.ok && result.error.code).toBe('invalid_model_output');
    expect(model.requests).toHaveLength(3);
  });

  it('feeds a reference that never resolves back to the model as an unresolved_reference error', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([{ match: { step: 0, contains: 'unresolved_reference' }, solution: { calls: [], output: 'saw it' } }]);
    const document = loopDocument([{ type: 'plan', calls: [{ _tool: 'echo', text: '†state.missing', _output: 'z' }] }]);
    const result = await runtime.run(runtime.validate(document), { model });
    expect(result.ok && result.output).toBe('saw it');
    expect(model.requests[0]?.messages.map((message) => message.content).join('\n')).toContain('†state.missing');
  });

  it('feeds a call of an unknown tool back to the model as an unknown_tool error listing the known tools', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([{ match: { step: 0, contains: 'unknown_tool' }, solution: { calls: [], output: 'saw it' } }]);
    const document = loopDocument([{ type: 'plan', calls: [{ _tool: 'ecko', text: 'x' }] }]);
    const result = await runtime.run(runtime.validate(document), { model });
    expect(result.ok && result.output).toBe('saw it');
    expect(model.requests[0]?.messages.map((message) => message.content).join('\n')).toContain('known tools: echo');
  });

  it('stops at maxSteps with max_steps_exceeded', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([{ solution: { calls: [], output: null }, repeat: true }]);
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument()), { model, maxSteps: 3, tracer });
    expect(!result.ok && result.error.code).toBe('max_steps_exceeded');
    // The failure event carries the error flat and as data, as call.failed does (TRACE-10, ERR-1).
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'max_steps_exceeded', error: { code: 'max_steps_exceeded', maxSteps: 3 } });
    expect(events.filter((event) => event.event === 'model.request')).toHaveLength(3);
  });

  it('cancels promptly when the signal aborts', async () => {
    const controller = new AbortController();
    const runtime = new Runtime({
      activities: {
        echo: (_call, _tool, _context, environment) =>
          new Promise((_resolve, reject) => environment.signal.addEventListener('abort', () => reject(new Error('aborted')))),
      },
    });
    const model = new ReplayModel([{ solution: { calls: [{ _tool: 'echo', text: 'x' }], output: null } }]);
    const { tracer, events } = traced();
    const running = runtime.run(runtime.validate(loopDocument()), { model, signal: controller.signal, tracer });
    setTimeout(() => controller.abort(), 20);
    const result = await running;
    expect(!result.ok && result.error.code).toBe('cancelled_by_user');
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
  });

  it('asks the confirm hook before every execution and feeds a rejection back', async () => {
    const runtime = new Runtime({ activities: { echo: () => 'ran' } });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'echo', text: 'x' }], output: null } },
      { match: { step: 1, contains: 'rejected_by_user' }, solution: { calls: [], output: 'ok' } },
    ]);
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument()), { model, tracer, confirm: () => ({ decision: 'rejected', reason: 'not today' }) });
    expect(result.ok).toBe(true);
    expect(events.find((event) => event.event === 'approval.decided')).toMatchObject({ decision: 'rejected', reason: 'not today' });
  });

  it('returns an unexecuted plan in lazy mode', async () => {
    const runtime = new Runtime({
      activities: {
        echo: () => {
          throw new Error('must not run');
        },
      },
    });
    const model = new ReplayModel([{ solution: { calls: [{ _tool: 'echo', text: '†input.word', _outputPath: '†output' }], output: null } }]);
    const result = await runtime.run(runtime.validate(loopDocument([{ type: 'plan', mode: 'lazy', calls: [] }])), { model });
    expect(result.ok && result.output).toEqual({ type: 'plan', mode: 'eager', calls: [{ _tool: 'echo', text: '†input.word', _outputPath: '†output' }] });
  });

  it('keeps instances apart: reads, writes and scoped context', async () => {
    const contexts: unknown[] = [];
    const runtime = new Runtime({
      activities: {
        echo: (call, _tool, context) => {
          contexts.push({ instance: call._instance, context });
          return `${String(call.text)}!`;
        },
      },
    });
    const document = {
      context: [
        { type: 'tool', tool: { echo: { properties: { text: { type: 'string' } }, _scopes: ['state'] } } },
        { type: 'state', state: { word: 'global' } },
        { type: 'state', _instance: 'a', state: { word: 'alpha' } },
        { type: 'state', _instance: 'b', state: { word: 'beta' } },
        {
          type: 'plan',
          calls: [
            { _tool: 'echo', _instance: 'a', text: '†state.word', _outputPath: '†state.out' },
            { _tool: 'echo', _instance: 'b', text: '†state.word', _outputPath: '†state.out' },
          ],
        },
      ],
      schema: { type: 'string' },
    };
    const model = new ReplayModel([{ solution: { calls: [], output: 'x' } }]);
    await runtime.run(runtime.validate(document), { model });
    const text = JSON.stringify(contexts);
    const forA = JSON.stringify(contexts.find((entry) => (entry as { instance: string }).instance === 'a'));
    expect(forA).toContain('alpha');
    expect(forA).not.toContain('beta');
    expect(text).toContain('beta');
    expect(model.requests[0]?.messages.map((message) => message.content).join('\n')).toContain('alpha!');
  });
});

describe('bounds and guards', () => {
  it('stops a run tree that spends more tokens than its budget with budget_exceeded', async () => {
    const runtime = new Runtime();
    const model = new ReplayModel([{ solution: { calls: [], output: null }, usage: { inputTokens: 60, outputTokens: 10 }, repeat: true }]);
    const result = await runtime.run(runtime.validate({ ...loopDocument(), config: { budget: { tokens: 150 } } }), { model });
    expect(!result.ok && result.error.code).toBe('budget_exceeded');
    // 70 + 70 is within 150; the third answer passes it.
    expect(model.requests).toHaveLength(3);
  });

  it('never lets a call choose an Activity, delegate or scopes its tool does not offer', async () => {
    const ran: string[] = [];
    const runtime = new Runtime({
      activities: {
        privileged: () => {
          ran.push('privileged');
          return 'x';
        },
        log: (_call, _tool, context) => {
          ran.push(`log with ${context.length} messages`);
          return 'logged';
        },
      },
    });
    const model = new ReplayModel([
      {
        match: { step: 0 },
        solution: {
          calls: [
            { _tool: 'echo', text: 'a', _output: 'b', _activity: 'privileged' },
            { _tool: 'log', _scopes: ['state'] },
            // On a latent call, _scopes are a focus hint (SCOPE-11): accepted, and nothing receives context.
            { _tool: 'echo', text: 'a', _output: 'b', _scopes: ['state'] },
          ],
          output: null,
        },
      },
      { match: { step: 1 }, solution: { calls: [], output: 'done' } },
    ]);
    const { tracer, events } = traced();
    const extra = [
      { type: 'state', secret: 1 },
      { type: 'tool', tool: { log: { properties: {} } } },
    ];
    await runtime.run(runtime.validate(loopDocument(extra)), { model, tracer });
    expect(ran).toEqual([]);
    const failed = events.filter((event) => event.event === 'call.failed').map((event) => event.error as { code: string; message: string });
    expect(failed.map((error) => error.code)).toEqual(['invalid_params', 'invalid_params']);
    const refused = events.find((event) => event.event === 'call.failed' && event.tool === 'log');
    expect(refused?.error).toMatchObject({ message: expect.stringContaining('spec/scopes.md SCOPE-10') });
    expect(events.filter((event) => event.event === 'call.completed').map((event) => event.tool)).toEqual(['echo']);
  });
});

describe('latent scopes', () => {
  it('tells the model which context a latent tool with fixed scopes should rely on', async () => {
    const runtime = new Runtime();
    const document = runtime.validate({
      context: [{ type: 'tool', tool: { guess: { description: 'Guesses.', properties: {}, _scopes: ['state.user'], _output: { type: 'string' } } } }],
      schema: { type: 'string' },
    });
    const model = new ReplayModel([{ solution: { calls: [], output: 'x' } }]);
    await runtime.run(document, { model });
    expect(JSON.stringify(model.requests[0]?.schema)).toContain('Guesses. When you write _output, rely only on: state.user.');
  });
});

describe('lazy plans', () => {
  it('sends a plan whose calls wait on each other back to the model, then returns the corrected plan', async () => {
    const runtime = new Runtime();
    const cyclic = [
      { _tool: 'echo', text: '†state.b', _outputPath: '†state.a' },
      { _tool: 'echo', text: '†state.a', _outputPath: '†state.b' },
    ];
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: cyclic, output: null } },
      { match: { step: 1, contains: 'cycle' }, solution: { calls: [{ _tool: 'echo', text: 'x' }], output: null } },
    ]);
    const result = await runtime.run(runtime.validate(loopDocument([{ type: 'plan', mode: 'lazy', calls: [] }])), { model });
    expect(result.ok && result.output).toEqual({ type: 'plan', mode: 'eager', calls: [{ _tool: 'echo', text: 'x' }] });
  });
});

describe('schemas with local references', () => {
  it('runs a Request whose output schema and tools use $defs', async () => {
    const runtime = new Runtime({ activities: { lookup: () => ({ name: 'Ada' }) } });
    const document = runtime.validate({
      context: [
        {
          type: 'tool',
          tool: {
            lookup: {
              $defs: { person: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
              properties: { who: { $ref: '#/$defs/person' } },
              _output: { $ref: '#/$defs/person' },
            },
          },
        },
      ],
      schema: { $defs: { name: { type: 'string', minLength: 2 } }, type: 'object', properties: { name: { $ref: '#/$defs/name' } }, required: ['name'] },
    });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'lookup', who: { name: 'A' }, _outputPath: '†state.person' }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: { name: 'x' } } },
      { match: { step: 1 }, solution: { calls: [], output: { name: 'Ada' } } },
    ]);
    const { tracer, events } = traced();
    const result = await runtime.run(document, { model, tracer });
    expect(result.ok && result.output).toEqual({ name: 'Ada' });
    expect(events.filter((event) => event.event === 'call.completed')).toHaveLength(1);
    // The too-short name was re-asked: the output schema's $ref was enforced.
    expect(model.requests.map((request) => request.step)).toEqual([0, 1, 1]);
  });
});

describe('instance isolation of Activity results', () => {
  it('refuses a message an Activity on one instance returns for another instance', async () => {
    const runtime = new Runtime({ activities: { echo: () => ({ type: 'state', _instance: 'b', state: { stolen: true } }) } });
    const document = runtime.validate({
      context: [
        { type: 'tool', tool: { echo: { properties: { text: { type: 'string' } } } } },
        { type: 'state', _instance: 'a', state: {} },
        { type: 'state', _instance: 'b', state: {} },
        { type: 'plan', calls: [{ _tool: 'echo', _instance: 'a', text: 'x' }] },
      ],
      schema: { type: 'string' },
    });
    const model = new ReplayModel([{ solution: { calls: [], output: 'done' } }]);
    const { tracer, events } = traced();
    await runtime.run(document, { model, tracer });
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'activity_error' } });
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('stolen');
  });
});

describe('cancellation and Activities that ignore the signal', () => {
  it('stops waiting for an Activity that never looks at its signal', async () => {
    const controller = new AbortController();
    const runtime = new Runtime({ activities: { echo: () => new Promise(() => undefined) } });
    const model = new ReplayModel([{ solution: { calls: [{ _tool: 'echo', text: 'x' }], output: null } }]);
    const running = runtime.run(runtime.validate(loopDocument()), { model, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const result = await running;
    expect(!result.ok && result.error.code).toBe('cancelled_by_user');
  });
});

describe('the run signal', () => {
  it('lets many calls wait on cancellation at once without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const runtime = new Runtime({ activities: { echo: (call) => new Promise((resolve) => setTimeout(() => resolve(call.text), 5)) } });
      const calls = Array.from({ length: 25 }, (_, index) => ({ _tool: 'echo', text: `t${index}` }));
      const model = new ReplayModel([
        { match: { step: 0 }, solution: { calls, output: null } },
        { match: { step: 1 }, solution: { calls: [], output: 'ok' } },
      ]);
      const result = await runtime.run(runtime.validate(loopDocument()), { model, signal: new AbortController().signal });
      expect(result.ok).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('takes a listener from each of many Activities listening to it directly, without the warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const signals = new Set<AbortSignal>();
      const echo = (call: Call, _tool: unknown, _context: unknown, environment: { signal: AbortSignal }) =>
        new Promise((resolve) => {
          signals.add(environment.signal);
          const stop = () => resolve('stopped');
          environment.signal.addEventListener('abort', stop, { once: true });
          setTimeout(() => {
            environment.signal.removeEventListener('abort', stop);
            resolve(call.text);
          }, 5);
        });
      const runtime = new Runtime({ activities: { echo } });
      const calls = Array.from({ length: 25 }, (_, index) => ({ _tool: 'echo', text: `t${index}` }));
      const model = new ReplayModel([
        { match: { step: 0 }, solution: { calls, output: null } },
        { match: { step: 1 }, solution: { calls: [], output: 'ok' } },
      ]);
      const result = await runtime.run(runtime.validate(loopDocument()), { model });
      expect(result.ok).toBe(true);
      expect(signals.size).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('values nested too deep (DOC-10)', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < levels; level++) value = [value];
    return value;
  };
  const latent = { type: 'tool', tool: { keep: { description: 'Keeps a value.', properties: {}, _output: {} } } };

  it('refuses a model answer nested too deep: its streamed call never runs, the model is re-asked with the pointer, and the run ends with invalid_model_output', async () => {
    const runtime = new Runtime();
    const requests: ModelRequest[] = [];
    const call: Call = { _tool: 'keep', _output: nested(100_000), _outputPath: '†state.x' };
    const model: Model = {
      id: 'test:deep',
      async generate(request) {
        requests.push(request);
        request.onCall?.(call, 0);
        return { text: '(deep)', solution: { calls: [call], output: null }, model: 'test:deep', usage: zeroUsage(), costUsd: 0 };
      },
    };
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument([latent])), { model, tracer });
    expect(!result.ok && result.error.code).toBe('invalid_model_output');
    expect(!result.ok && result.error.message).toContain('Expected JSON nested at most 100 levels deep, but the value at /calls/0/_output/0/0/');
    expect(requests).toHaveLength(3);
    expect(requests[1]?.messages.at(-1)?.content).toContain('nested at most 100 levels deep');
    expect(events.some((event) => event.event.startsWith('call.'))).toBe(false);
    // The trace keeps the answer as text, which every sink can write.
    const responses = events.filter((event) => event.event === 'model.response');
    expect(responses.map((event) => [event.solution, event.text])).toEqual(Array(3).fill([null, '(deep)']));
  });

  it('fails an Activity that returns a value nested too deep with activity_error, and goes on', async () => {
    const runtime = new Runtime({ activities: { echo: () => nested(100_000) } });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'echo', text: 'x', _outputPath: '†state.x' }], output: null } },
      { match: { step: 1, contains: 'activity_error' }, solution: { calls: [], output: 'saw it' } },
    ]);
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument()), { model, tracer });
    expect(result.ok && result.output).toBe('saw it');
    const failed = events.find((event) => event.event === 'call.failed');
    expect(failed?.error).toMatchObject({ code: 'activity_error', message: expect.stringContaining('nested at most 100 levels deep') });
  });

  it('refuses a write that would nest the data ever deeper, so a long plan cannot build data too deep to render', async () => {
    const runtime = new Runtime();
    const deeper = '.p'.repeat(MAX_NESTING_DEPTH - 1);
    // Each call writes what the one before wrote, 99 levels further down.
    const calls = Array.from({ length: 60 }, (_, index) => ({
      _tool: 'keep',
      _output: index === 0 ? 'seed' : `†state.v${index - 1}`,
      _outputPath: `†state.v${index}${deeper}`,
    }));
    const model = new ReplayModel([{ match: { step: 0 }, solution: { calls: [], output: 'rendered' } }]);
    const { tracer, events } = traced();
    const result = await runtime.run(runtime.validate(loopDocument([latent, { type: 'plan', calls }])), { model, tracer });
    expect(result.ok && result.output).toBe('rendered');
    const failed = events.filter((event) => event.event === 'call.failed').map((event) => [event.call, (event.error as { code: string }).code]);
    expect(failed[0]).toEqual(['plan0.2', 'invalid_params']);
    expect(model.requests[0]?.messages.map((message) => message.content).join('\n')).toContain('would nest the state data deeper than 201 levels');
  });
});
