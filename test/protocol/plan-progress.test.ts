/**
 * Plans as the evolving strategy (spec/plans.md PLAN-10..PLAN-14): nothing done runs twice, each
 * step's calls become the plan shown with its progress, `_call` records as act 008 writes them,
 * templates over instances, and lazy planners whose plans are dry-run, approved and executed.
 */
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/protocol/model.js';
import { stepModel } from '../helpers/step-model.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity, ConfirmHook } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call } from '../../src/protocol/types.js';

/** The prompt of a request, as one string. */
function promptOf(request: ModelRequest | undefined): string {
  return (request?.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))).join('\n');
}

/** Activities that count their calls. */
function counting(results: Record<string, (call: Call) => unknown>): { activities: Record<string, Activity>; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  const activities = Object.fromEntries(
    Object.entries(results).map(([name, result]) => [
      name,
      ((call: Call) => {
        counts[name] = (counts[name] ?? 0) + 1;
        return result(call);
      }) as Activity,
    ]),
  );
  return { activities, counts };
}

// Act 012's refund example: check the billing history, then issue the refund.
const checkBilling: Call = { _tool: 'checkBillingHistory', customerId: '†input.customerId', _outputPath: '†state.billingHistory' };
const issueRefund: Call = { _tool: 'issueRefund', customerId: '†input.customerId', amount: '†input.amount' };
const refundTools = {
  type: 'tool',
  tool: {
    checkBillingHistory: { properties: { customerId: { type: 'string' } } },
    issueRefund: { properties: { customerId: { type: 'string' }, amount: { type: 'number' } } },
    escalateToSupervisor: { properties: { reason: { type: 'string' } } },
  },
};
const refundSchema = {
  type: 'object',
  properties: { confirmationId: { type: 'string' }, message: { type: 'string' } },
  required: ['confirmationId', 'message'],
};
const refundInput = { type: 'input', request: "I'd like a refund for my last order.", customerId: 'cust_123', amount: 50 };
const refunded = { confirmationId: 'refund_xyz789', message: 'The refund has been processed successfully.' };

function refundRuntime() {
  return counting({
    checkBillingHistory: () => ({ orders: 5, lastChargeback: '2025-09-10' }),
    issueRefund: (call) => ({ refunded: call.amount }),
    escalateToSupervisor: () => 'escalated',
  });
}

describe("act 012's refund example: the refund is issued exactly once (PLAN-10)", () => {
  it('from the second request of the act: the billing check is done (recorded, act 008), the model follows the plan', async () => {
    const { activities, counts } = refundRuntime();
    const runtime = new Runtime({ activities });
    const document = {
      context: [
        refundTools,
        refundInput,
        { type: 'state', billingHistory: { orders: 5, lastChargeback: '2025-09-10' }, _call: checkBilling, _date: '2025-10-26T12:00:00Z' },
        { type: 'plan', plan: [checkBilling, issueRefund] },
      ],
      schema: refundSchema,
    };
    const model = stepModel(() => ({ calls: [issueRefund], output: refunded }));
    const result = await runtime.run(runtime.validate(document), { model });
    expect(result.ok && result.output).toEqual(refunded);
    expect(counts).toEqual({ issueRefund: 1 });
    const prompt = promptOf(model.requests[0]);
    expect(prompt).toMatch(/^done: \{"_tool":"checkBillingHistory"/m);
    expect(prompt).toMatch(/^pending: \{"_tool":"issueRefund"/m);
  });

  it('when the model repeats the whole plan, the done call is skipped and traced, not run again', async () => {
    const { activities, counts } = refundRuntime();
    const runtime = new Runtime({ activities });
    const sink = memorySink();
    const document = {
      context: [
        refundTools,
        refundInput,
        { type: 'state', billingHistory: { orders: 5 }, _call: checkBilling },
        { type: 'plan', plan: [checkBilling, issueRefund] },
      ],
      schema: refundSchema,
    };
    const model = stepModel(() => ({ calls: [{ ...checkBilling, _reasoningForCall: 'Following the plan.' }, issueRefund], output: refunded }));
    const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]) });
    expect(result.ok).toBe(true);
    expect(counts).toEqual({ issueRefund: 1 });
    expect(sink.events.filter((event) => event.event === 'call.skipped')).toMatchObject([{ tool: 'checkBillingHistory', reason: 'done' }]);
  });

  it('over the whole loop: the first answer plans both calls, the second repeats the refund, which is not issued again', async () => {
    const { activities, counts } = refundRuntime();
    const runtime = new Runtime({ activities });
    const model = stepModel(
      () => ({ calls: [checkBilling, issueRefund], output: null }),
      () => ({ calls: [issueRefund], output: refunded }),
    );
    const result = await runtime.run(runtime.validate({ context: [refundTools, refundInput], schema: refundSchema }), { model });
    expect(result.ok && result.output).toEqual(refunded);
    expect(counts).toEqual({ checkBillingHistory: 1, issueRefund: 1 });
    // The second prompt shows the first answer as the plan, both calls done.
    const second = promptOf(model.requests[1]);
    expect(second).toContain('strategy so far');
    expect(second.match(/^done: /gm)).toHaveLength(2);
    // One plan message in the context, the last answer's, with its progress.
    const plans = (result.context ?? []).filter((message) => message.type === 'plan');
    expect(plans).toEqual([{ type: 'plan', mode: 'eager', calls: [issueRefund], _status: ['done'] }]);
  });
});

describe('plans as the strategy so far (PLAN-2, PLAN-10, PLAN-11)', () => {
  const tools = { type: 'tool', tool: { step: { properties: { n: { type: 'number' } } } } };

  it('runs a fresh plan of the document before the model; one with progress is left to the model', async () => {
    const fresh = counting({ step: (call) => call.n });
    const freshRuntime = new Runtime({ activities: fresh.activities });
    const plan = { type: 'plan', calls: [{ _tool: 'step', n: 1, _outputPath: '†output' }] };
    const done = await freshRuntime.run(freshRuntime.validate({ context: [tools, plan], schema: { type: 'number' } }));
    expect(done.ok && done.output).toBe(1);
    expect(fresh.counts).toEqual({ step: 1 });

    const started = counting({ step: (call) => call.n });
    const runtime = new Runtime({ activities: started.activities });
    const inProgress = {
      type: 'plan',
      calls: [
        { _tool: 'step', n: 1 },
        { _tool: 'step', n: 2 },
      ],
      _status: ['done', 'pending'],
    };
    const model = stepModel(() => ({
      calls: [
        { _tool: 'step', n: 1 },
        { _tool: 'step', n: 2 },
      ],
      output: 2,
    }));
    const result = await runtime.run(runtime.validate({ context: [tools, inProgress], schema: { type: 'number' } }), { model });
    expect(result.ok && result.output).toBe(2);
    expect(started.counts).toEqual({ step: 1 });
  });

  it('shows a failed call with its error, and runs it again when the model repeats it', async () => {
    let attempts = 0;
    const runtime = new Runtime({
      activities: {
        step: () => {
          attempts += 1;
          if (attempts === 1) throw new Error('The service is down.');
          return 'ok';
        },
      },
    });
    const call = { _tool: 'step', n: 1, _outputPath: '†state.result' };
    const model = stepModel(
      () => ({ calls: [call], output: null }),
      () => ({ calls: [call], output: null }),
      () => ({ calls: [], output: 'finished' }),
    );
    const result = await runtime.run(runtime.validate({ context: [tools], schema: { type: 'string' } }), { model });
    expect(result.ok).toBe(true);
    expect(attempts).toBe(2);
    const second = promptOf(model.requests[1]);
    expect(second).toMatch(/^failed \(error /m);
    expect(second).toContain('The service is down.');
    expect(promptOf(model.requests[2])).toMatch(/^done: /m);
  });

  it('keeps a call done in this run though it wrote nothing, and still runs two equal calls of one answer twice', async () => {
    const { activities, counts } = counting({ step: () => undefined });
    const runtime = new Runtime({ activities });
    const model = stepModel(
      () => ({
        calls: [
          { _tool: 'step', n: 1 },
          { _tool: 'step', n: 1 },
        ],
        output: null,
      }),
      () => ({ calls: [{ _tool: 'step', n: 1 }], output: null }),
      () => ({ calls: [{ _tool: 'step', n: 1, _id: 'again' }], output: 'finished' }),
    );
    const result = await runtime.run(runtime.validate({ context: [tools], schema: { type: 'string' } }), { model });
    expect(result.ok).toBe(true);
    // Twice in the first answer, skipped in the second, and once more under its own `_id`.
    expect(counts).toEqual({ step: 3 });
  });

  it('tells calls apart by every parameter, one named `id` included', async () => {
    const { activities, counts } = counting({ fetchUser: (call) => `user ${String(call.id)}` });
    const runtime = new Runtime({ activities });
    const fetchTools = { type: 'tool', tool: { fetchUser: { properties: { id: { type: 'number' } } } } };
    const model = stepModel(
      () => ({ calls: [{ _tool: 'fetchUser', id: 1, _outputPath: '†state.first' }], output: null }),
      () => ({ calls: [{ _tool: 'fetchUser', id: 2, _outputPath: '†state.first' }], output: 'ok' }),
    );
    const result = await runtime.run(runtime.validate({ context: [fetchTools], schema: { type: 'string' } }), { model });
    expect(result.ok).toBe(true);
    expect(counts).toEqual({ fetchUser: 2 });
  });

  it('records the call itself in `_call` (act 008), and a context written in that shape loads', async () => {
    const runtime = new Runtime({ activities: { step: (call) => `result ${String(call.n)}` } });
    const call = { _tool: 'step', n: '†input.n', _outputPath: '†state.result' };
    const first = await runtime.run(runtime.validate({ context: [tools, { type: 'plan', calls: [call] }], schema: { type: 'string' } }), {
      input: { n: 3 },
      model: stepModel(() => ({ calls: [], output: 'ok' })),
    });
    const written = (first.context ?? []).find((message) => message.type === 'data' && message.kind === 'state');
    expect(written).toMatchObject({ data: 'result 3', _path: 'result', _call: call });
    expect(typeof written?._date).toBe('string');

    const act008 = [
      { type: 'data', data: { user: { name: 'Alex', status: 'active' } } },
      {
        type: 'data',
        data: { user: { status: 'inactive' } },
        _call: { _tool: 'updateUserStatus', newStatus: 'inactive', _outputPath: '†data.user.status' },
        _date: '2025-10-26T12:00:00Z',
      },
    ];
    const loaded = runtime.validate({ context: act008, schema: { type: 'string' } });
    expect(loaded.document.context).toHaveLength(2);
  });
});

describe("act 012's adjusting a plan: a plan the user spoke after is left to the model (PLAN-2)", () => {
  const travelTools = {
    type: 'tool',
    tool: {
      bookFlight: { properties: { destination: { type: 'string' } } },
      bookHotel: { properties: { destination: { type: 'string' } } },
      findPetFriendlyHotel: { properties: { destination: { type: 'string' } } },
    },
  };
  const happyPath = {
    type: 'plan',
    plan: [
      { _tool: 'bookFlight', destination: '†input.destination' },
      { _tool: 'bookHotel', destination: '†input.destination' },
    ],
  };
  const adjusted = [
    { _tool: 'bookFlight', destination: '†input.destination' },
    { _tool: 'findPetFriendlyHotel', destination: '†input.destination' },
  ];
  const travel = () => counting({ bookFlight: () => 'FL-1', bookHotel: () => 'HT-1', findPetFriendlyHotel: () => 'PET-1' });

  it('never books the hotel: the model sees the plan pending after the new input and replaces bookHotel', async () => {
    const { activities, counts } = travel();
    const runtime = new Runtime({ activities });
    const dog = { type: 'input', destination: 'Berlin', instruction: "Actually, I'll be traveling with my dog." };
    const model = stepModel(
      () => ({ calls: adjusted, output: null }),
      () => ({ calls: [], output: 'booked' }),
    );
    const result = await runtime.run(runtime.validate({ context: [travelTools, happyPath, dog], schema: { type: 'string' } }), { model });
    expect(result.ok && result.output).toBe('booked');
    expect(counts).toEqual({ bookFlight: 1, findPetFriendlyHotel: 1 });
    const first = promptOf(model.requests[0]);
    expect(first).toMatch(/^pending: \{"_tool":"bookHotel"/m);
    expect(first).toContain('traveling with my dog');
    expect(promptOf(model.requests[1])).toMatch(/^done: \{"_tool":"findPetFriendlyHotel"/m);
  });

  it('leaves a plan followed by a user turn to the model too', async () => {
    const { activities, counts } = travel();
    const runtime = new Runtime({ activities });
    const model = stepModel(() => ({ calls: [], output: 'asked' }));
    const context = [travelTools, { type: 'input', input: { destination: 'Berlin' } }, happyPath, { type: 'user', text: 'Wait, I have a dog.' }];
    const result = await runtime.run(runtime.validate({ context, schema: { type: 'string' } }), { model });
    expect(result.ok && result.output).toBe('asked');
    expect(counts).toEqual({});
  });

  it("still runs a plan that is the last word with no model: the run's given input, a template slot, state and system text after it are no change of mind", async () => {
    const { activities, counts } = travel();
    const runtime = new Runtime({ activities });
    const plan = { type: 'plan', calls: [{ _tool: 'bookFlight', destination: '†input.destination', _outputPath: '†output' }] };
    const slot = { type: 'input', schema: { type: 'object', properties: { destination: { type: 'string' } } } };
    const context = [travelTools, plan, slot, { type: 'state', state: { seat: 'aisle' } }, { type: 'system', text: 'Be brief.' }];
    const result = await runtime.run(runtime.validate({ context, schema: { type: 'string' } }), {
      input: { destination: 'Berlin' },
    });
    expect(result.ok && result.output).toBe('FL-1');
    expect(counts).toEqual({ bookFlight: 1 });
  });
});

describe('the plan shows what each call was and what became of it, not its reasoning or an ephemeral result (PLAN-16)', () => {
  it("leaves out _reasoningForCall, and the _output of a latent call without _outputPath, from the next step's plan", async () => {
    const runtime = new Runtime({ activities: { lookup: () => 'LOOKED-UP' } });
    const tools = {
      type: 'tool',
      tool: { think: { properties: { topic: { type: 'string' } }, _output: { type: 'string' } }, lookup: { properties: { q: { type: 'string' } } } },
    };
    const model = stepModel(
      () => ({
        calls: [
          { _tool: 'think', topic: 'routes', _reasoningForCall: 'REASONING-MARK', _output: 'EPHEMERAL-THOUGHT' },
          { _tool: 'think', topic: 'kept', _output: 'KEPT-NOTE', _outputPath: '†state.note' },
          { _tool: 'lookup', q: 'x', _reasoningForCall: 'WHY-LOOKUP', _outputPath: '†state.found' },
        ],
        output: null,
      }),
      () => ({ calls: [], output: 'done' }),
    );
    const result = await runtime.run(runtime.validate({ context: [tools], schema: { type: 'string' } }), { model });
    expect(result.ok).toBe(true);
    const second = promptOf(model.requests[1]);
    expect(second).toMatch(/^done: \{"_tool":"think","topic":"routes"\}$/m);
    expect(second).toMatch(/^done: \{"_tool":"think","topic":"kept","_output":"KEPT-NOTE","_outputPath":"†state.note"\}$/m);
    expect(second).toMatch(/^done: \{"_tool":"lookup","q":"x","_outputPath":"†state.found"\}$/m);
    for (const ephemeral of ['REASONING-MARK', 'EPHEMERAL-THOUGHT', 'WHY-LOOKUP']) expect(second).not.toContain(ephemeral);
  });
});

describe('a plan without _instance is a template over the instances (PLAN-12)', () => {
  it('runs once per instance, concurrently, each run reading and writing only its instance', async () => {
    const seen: { instance: unknown; word: unknown }[] = [];
    let running = 0;
    let most = 0;
    const runtime = new Runtime({
      activities: {
        shout: async (call) => {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 10));
          running -= 1;
          seen.push({ instance: call._instance, word: call.word });
          return `${String(call.word).toUpperCase()} ${String(call.greeting)}`;
        },
      },
    });
    const document = {
      context: [
        { type: 'tool', tool: { shout: { properties: { word: { type: 'string' }, greeting: { type: 'string' } } } } },
        { type: 'input', greeting: 'hello' },
        { type: 'state', _instance: 'a', word: 'alpha' },
        { type: 'state', _instance: 'b', word: 'beta' },
        { type: 'plan', calls: [{ _tool: 'shout', word: '†state.word', greeting: '†input.greeting', _outputPath: '†state.loud' }] },
      ],
      schema: { type: 'string' },
    };
    const model = stepModel(() => ({ calls: [], output: 'done' }));
    const result = await runtime.run(runtime.validate(document), { model });
    expect(result.ok).toBe(true);
    expect(seen.sort((x, y) => String(x.instance).localeCompare(String(y.instance)))).toEqual([
      { instance: 'a', word: 'alpha' },
      { instance: 'b', word: 'beta' },
    ]);
    expect(most).toBe(2);
    const writes = (result.context ?? []).filter((message) => message.type === 'data');
    expect(writes.map((message) => [message._instance, message.data])).toEqual(
      expect.arrayContaining([
        ['a', 'ALPHA hello'],
        ['b', 'BETA hello'],
      ]),
    );
    expect((result.context ?? []).find((message) => message.type === 'plan')).toMatchObject({ _status: [{ a: 'done', b: 'done' }] });
    expect(promptOf(model.requests[0])).toMatch(/^done on a, b: /m);
  });
});

describe('a template over 100 instances whose Activity hangs on one (PLAN-12, LOOP-10)', () => {
  it('runs the 99 others, and on cancellation ends the run with every call settled, the hung one cancelled', async () => {
    const controller = new AbortController();
    let started = 0;
    const sink = memorySink();
    const runtime = new Runtime({
      activities: {
        // Instance i42 never answers and never looks at its signal.
        shout: (call) => (call._instance === 'i42' ? new Promise(() => undefined) : `${String(call.word)}!`),
      },
    });
    const instances = Array.from({ length: 100 }, (_, index) => ({ type: 'state', _instance: `i${index}`, word: `w${index}` }));
    const document = {
      context: [
        { type: 'tool', tool: { shout: { properties: { word: { type: 'string' } } } } },
        ...instances,
        { type: 'plan', calls: [{ _id: 'loud', _tool: 'shout', word: '†state.word', _outputPath: '†state.loud' }] },
      ],
      schema: { type: 'string' },
    };
    const tracer = new Tracer([
      sink,
      (event) => {
        if (event.event === 'call.started') started += 1;
        const completed = sink.events.filter((seen) => seen.event === 'call.completed').length;
        // Cancel once all 100 started and the 99 that can answer have.
        if (started === 100 && completed === 99 && !controller.signal.aborted) controller.abort();
      },
    ]);
    const result = await runtime.run(runtime.validate(document), {
      model: stepModel(() => ({ calls: [], output: 'done' })),
      tracer,
      signal: controller.signal,
    });
    expect(!result.ok && result.error.code).toBe('cancelled_by_user');
    const events = sink.events;
    const ends = (name: string) => events.filter((event) => event.event === name).map((event) => event.call);
    expect(ends('call.started')).toHaveLength(100);
    expect(ends('call.completed')).toHaveLength(99);
    expect(ends('call.completed')).not.toContain('loud@i42');
    expect(events.filter((event) => event.event === 'call.failed')).toEqual([
      expect.objectContaining({ call: 'loud@i42', error: expect.objectContaining({ code: 'cancelled_by_user' }) }),
    ]);
    expect(events.some((event) => event.event === 'model.request')).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
  });
});

describe('lazy planners (PLAN-7, PLAN-13, PLAN-14)', () => {
  const tools = {
    type: 'tool',
    tool: {
      summarize: { properties: { text: { type: 'string' } }, _output: { type: 'string' } },
      publish: { properties: { summary: { type: 'string' } } },
    },
  };
  const plan: Call[] = [
    { _tool: 'summarize', text: '†input.text', _outputPath: '†state.summary || †state.failure' },
    { _tool: 'publish', summary: '†state.summary', _outputPath: '†output' },
  ];

  it('does not ask for _output of latent tools, keeps branches, and executes nothing', async () => {
    const { activities, counts } = counting({ publish: () => 'published' });
    const runtime = new Runtime({ activities });
    const model = stepModel(() => ({ calls: plan, output: null }));
    const result = await runtime.run(runtime.validate({ context: [tools, { type: 'plan', mode: 'lazy' }], schema: { type: 'string' } }), { model });
    expect(result.ok && result.output).toEqual({ type: 'plan', mode: 'eager', calls: plan });
    expect(counts).toEqual({});
    const schema = JSON.stringify(model.requests[0]?.schema);
    expect(schema).not.toContain('"_output"]');
  });

  it('sends a plan back when it names an unknown reference, then returns the corrected one', async () => {
    const runtime = new Runtime();
    const broken: Call[] = [{ _tool: 'publish', summary: '†state.sumary', _outputPath: '†output' }];
    const model = stepModel(
      () => ({ calls: broken, output: null }),
      () => ({ calls: plan, output: null }),
    );
    const result = await runtime.run(
      runtime.validate({ context: [tools, { type: 'state', ready: true }, { type: 'plan', mode: 'lazy' }], schema: { type: 'string' } }),
      { model },
    );
    expect(result.ok && result.output).toMatchObject({ calls: plan });
    expect(promptOf(model.requests[1])).toContain('†state.sumary, which neither the context nor any call of the plan provides');
  });

  it("dry-runs by instance: another instance's write provides nothing, a global one provides for all", async () => {
    const runtime = new Runtime();
    const planned = (writerInstance: string | undefined): Call[] => [
      { _tool: 'summarize', text: 'x', _outputPath: '†state.summary', ...(writerInstance === undefined ? {} : { _instance: writerInstance }) },
      { _tool: 'publish', _instance: 'a', summary: '†state.summary', _outputPath: '†state.done' },
    ];
    const context = [tools, { type: 'state', _instance: 'a', ready: true }, { type: 'state', _instance: 'b', ready: true }, { type: 'plan', mode: 'lazy' }];
    const model = stepModel(
      () => ({ calls: planned('b'), output: null }),
      () => ({ calls: planned(undefined), output: null }),
    );
    const result = await runtime.run(runtime.validate({ context, schema: { type: 'string' } }), { model });
    expect(result.ok && result.output).toMatchObject({ calls: planned(undefined) });
    expect(promptOf(model.requests[1])).toContain('Call #1 (publish) reads †state.summary, which neither the context nor any call of the plan provides');
  });

  it('with execute: true, asks for approval and runs the approved plan as a plan message', async () => {
    const { activities, counts } = counting({ publish: (call) => `published: ${String(call.summary)}` });
    const runtime = new Runtime({ activities });
    const asked: Call[] = [];
    const confirm: ConfirmHook = (request) => {
      asked.push(request.call);
      return { decision: 'approved' };
    };
    const latentPlan: Call[] = [
      { _tool: 'summarize', text: '†input.text', _output: 'short', _outputPath: '†state.summary' },
      { _tool: 'publish', summary: '†state.summary', _outputPath: '†output' },
    ];
    const model = stepModel(() => ({ calls: latentPlan, output: null }));
    const document = { context: [tools, { type: 'plan', mode: 'lazy', execute: true }], schema: { type: 'string' } };
    const result = await runtime.run(runtime.validate(document), { model, confirm, input: { text: 'long text' } });
    expect(result.ok && result.output).toBe('published: short');
    expect(counts).toEqual({ publish: 1 });
    // The whole plan is asked about first, then each call as it runs.
    expect(asked[0]).toEqual({ _tool: '(plan)', calls: latentPlan });
    expect(asked.map((call) => call._tool)).toEqual(['(plan)', 'summarize', 'publish']);
    expect(model.requests).toHaveLength(1);
  });

  it('with execute: true, a rejected plan is returned unexecuted', async () => {
    const { activities, counts } = counting({ publish: () => 'published' });
    const runtime = new Runtime({ activities });
    const model = stepModel(() => ({ calls: plan, output: null }));
    const document = { context: [tools, { type: 'plan', mode: 'lazy', execute: true }], schema: { type: 'string' } };
    const result = await runtime.run(runtime.validate(document), { model, confirm: () => ({ decision: 'rejected', reason: 'Not now.' }) });
    expect(result.ok && result.output).toEqual({ type: 'plan', mode: 'eager', calls: plan });
    expect(counts).toEqual({});
  });
});

describe('plan documents (PLAN-1)', () => {
  it('names /context/<i>/plan when `plan` and `calls` disagree', () => {
    const runtime = new Runtime();
    expect(() =>
      runtime.validate({ context: [{ type: 'plan', plan: [{ _tool: 'a' }], calls: [{ _tool: 'b' }] }], schema: { type: 'string' } }, 'doc.json'),
    ).toThrow(/doc\.json.*\/context\/0\/plan/s);
  });

  it('refuses a _status whose length is not that of the calls', () => {
    const runtime = new Runtime();
    expect(() => runtime.validate({ context: [{ type: 'plan', calls: [{ _tool: 'a' }], _status: [] }], schema: { type: 'string' } }, 'doc.json')).toThrow(
      /\/context\/0\/_status/,
    );
  });
});

describe("act 012's failure example: the failure branch of an output path (VAR-19)", () => {
  it('writes the error to the last alternative, so the model can replan around it, and the call stays failed', async () => {
    const reported: unknown[] = [];
    const runtime = new Runtime({
      activities: {
        processPayment: () => {
          throw new Error('card_declined: Your card was declined.');
        },
        confirmOrder: () => 'confirmed',
        reportFailure: (call) => {
          reported.push(call.error);
          return 'reported';
        },
      },
    });
    const tools = {
      type: 'tool',
      tool: {
        processPayment: { properties: { amount: { type: 'number' } } },
        confirmOrder: { properties: { receipt: {} } },
        reportFailure: { properties: { error: {} } },
      },
    };
    const plan: Call[] = [
      { _tool: 'processPayment', amount: '†input.amount', _outputPath: '†state.receipt || †state.error' },
      { _tool: 'confirmOrder', receipt: '†state.receipt' },
    ];
    const schema = { type: 'object', properties: { status: { enum: ['Success', 'Failed'] } }, required: ['status'] };
    const model = stepModel(
      () => ({ calls: plan, output: null }),
      () => ({ calls: [{ _tool: 'reportFailure', error: '†state.error' }], output: { status: 'Failed' } }),
    );
    const result = await runtime.run(runtime.validate({ context: [tools, { type: 'input', amount: 50 }], schema }), { model });
    expect(result.ok && result.output).toEqual({ status: 'Failed' });
    expect(reported).toEqual([{ code: 'activity_error', message: expect.stringContaining('Your card was declined.') }]);
    const second = promptOf(model.requests[1]);
    expect(second).toContain('Your card was declined.');
    expect(second).toContain('"error":{"code":"activity_error"');
    // A run given this context knows the payment failed, not done.
    const plans = (result.context ?? []).filter((message) => message.type === 'plan');
    expect(plans).toMatchObject([{ calls: [{ _tool: 'reportFailure' }], _status: ['done'] }]);
    const resumed = stepModel(() => ({ calls: [], output: { status: 'Failed' } }));
    await runtime.run(runtime.validate({ context: [...(result.context ?? []), { type: 'plan', calls: plan }], schema }), { model: resumed });
    expect(promptOf(resumed.requests[0])).toMatch(/^failed[ :]/m);
  });
});
