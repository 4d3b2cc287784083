/** Advisors end to end through the library (spec/advisors.md): loading, the Solution's `advisors` part, re-asks, opinions kept and traced, consultations. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { toStrictSchema } from '../../src/models/strict-schema.js';
import { RequestError } from '../../src/protocol/errors.js';
import { renderContext } from '../../src/protocol/messages/render-context.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { compileSchema } from '../../src/protocol/schemas.js';
import { composeSolutionSchema } from '../../src/protocol/tools/tools.js';
import { Tracer, memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';
import type { Call, Message, RequestDocument } from '../../src/protocol/types.js';
import { collectTools } from '../../src/protocol/tools/tools.js';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';

const riskAnalyst = {
  type: 'advisor',
  id: 'riskAnalyst',
  on: 'request',
  scopes: ['†state.deploymentHistory'],
  role: 'Analyze risks and vote for deployment actions.',
  schema: { type: 'object', properties: { thought: { type: 'string' } }, required: ['thought'] },
};

const tools = {
  type: 'tool',
  tool: {
    deploy: { description: 'Deploys the release.', properties: { version: { type: 'string' } }, required: ['version'] },
    delay: { description: 'Delays the release.', properties: { days: { type: 'number' } }, required: ['days'] },
  },
};

function releaseDocument(advisors: object[], extra: object[] = []): RequestDocument {
  return {
    meta: { name: 'release' },
    context: [
      { type: 'system', text: 'Decide about the release.' },
      { type: 'state', state: { deploymentHistory: ['1.0 rolled back'] } },
      tools,
      ...advisors,
      ...extra,
    ],
    schema: { type: 'string' },
  } as RequestDocument;
}

/** Activities that count their calls. */
function counting() {
  const seen: Call[] = [];
  const record = (call: Call) => {
    seen.push(call);
    return `${call._tool} done`;
  };
  return { seen, activities: { deploy: record, delay: record } };
}

async function run(document: RequestDocument, entries: ConstructorParameters<typeof ReplayModel>[0], activities = counting().activities) {
  const sink = memorySink();
  const model = new ReplayModel(entries);
  const runtime = new Runtime({ activities });
  const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]), maxSteps: 4 });
  return { result, events: sink.events, model };
}

const of = (events: TraceEvent[], name: string) => events.filter((event) => event.event === name);

/** The Solution schema and answer check of a context at a step, as a run composes them. */
function solutionAt(context: Message[], step: number) {
  const handlers = defaultHandlers();
  const rendered = renderContext(context, handlers, {}, { step });
  const schema = composeSolutionSchema(collectTools(context, new Map(), handlers), { type: 'string' }, () => false, rendered.solutionProperties, [], false, {
    required: rendered.solutionRequired,
    definitions: rendered.solutionDefinitions,
  });
  return { schema: schema as { properties: Record<string, { items?: unknown; minItems?: number; maxItems?: number }>; required: string[] }, rendered };
}

describe('loading advisors (ADV-1, ADV-2, ADV-3)', () => {
  const load = (document: unknown) => {
    try {
      new Runtime().validate(document, '/docs/release.json');
      return [];
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return error.problems.map((problem) => `${problem.pointer} ${problem.message}`);
    }
  };

  it('loads the act 017 example as written', () => {
    expect(load(releaseDocument([riskAnalyst]))).toEqual([]);
  });

  it('refuses two advisors with one id, naming both pointers', () => {
    const problems = load(releaseDocument([riskAnalyst, { ...riskAnalyst, on: 'start' }]));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^\/context\/4\/id /);
    expect(problems[0]).toContain('/context/3');
    expect(problems[0]).toContain('"riskAnalyst"');
  });

  it('refuses a schema that is not an object schema, or that declares id, calls or _instance', () => {
    const problems = load(
      releaseDocument([
        { ...riskAnalyst, id: 'a', schema: { type: 'string' } },
        { ...riskAnalyst, id: 'b', schema: { type: 'object', properties: { calls: { type: 'string' }, id: { type: 'string' } } } },
        { ...riskAnalyst, id: 'c', schema: { type: 'object', properties: { x: { type: 'nonsense' } } } },
      ]),
    );
    expect(problems.some((problem) => problem.startsWith('/context/3/schema/type '))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('/context/4/schema/properties/calls '))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('/context/4/schema/properties/id '))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('/context/5/schema'))).toBe(true);
  });

  it('refuses an unknown `on`, a missing role and a malformed id', () => {
    const problems = load(
      releaseDocument([
        { ...riskAnalyst, on: 'sometimes' },
        { type: 'advisor', id: 'noRole' },
        { ...riskAnalyst, id: 'has space' },
      ]),
    );
    expect(problems.some((problem) => problem.startsWith('/context/3/on'))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('/context/4 ') && problem.includes('"role"'))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('/context/5/id'))).toBe(true);
  });

  it('refuses a scope that is no context key', () => {
    const problems = load(releaseDocument([{ ...riskAnalyst, scopes: ['input', 'state..x'] }]));
    expect(problems).toEqual([expect.stringMatching(/^\/context\/3\/scopes\/1 Expected a context key/)]);
  });
});

describe('the advisors part of the Solution (ADV-4, ADV-5)', () => {
  const council = [
    { type: 'advisor', id: 'opener', on: 'start', role: 'Sets the direction.' },
    { type: 'advisor', id: 'monitor', on: 'request', role: 'Watches safety.' },
    { type: 'advisor', id: 'closer', on: 'finish', role: 'Decides whether to stop.' },
    { type: 'advisor', id: 'counsel', role: 'Legal view, on demand.' },
  ];
  const context = releaseDocument(council).context;
  const ids = (items: unknown) =>
    ((items as { anyOf: { properties: { id: { const: string } } }[] }).anyOf ?? [items]).map(
      (branch) => (branch as { properties: { id: { const: string } } }).properties.id.const,
    );

  it('is the first property, required, offering start, request and finish advisors at the first step', () => {
    const { schema } = solutionAt(context, 0);
    expect(Object.keys(schema.properties)).toEqual(['advisors', 'calls', 'output']);
    expect(schema.required).toEqual(['advisors', 'calls', 'output']);
    expect(ids(schema.properties.advisors?.items)).toEqual(['opener', 'monitor', 'closer']);
    expect(schema.properties.advisors?.minItems).toBe(2);
    expect(schema.properties.advisors?.maxItems).toBe(3);
  });

  it('drops the start advisor after the first step; an on-demand advisor is never in it', () => {
    const { schema } = solutionAt(context, 1);
    expect(ids(schema.properties.advisors?.items)).toEqual(['monitor', 'closer']);
    expect(schema.properties.advisors?.minItems).toBe(1);
  });

  it('is absent, and not required, when no advisor speaks in it', () => {
    const { schema } = solutionAt(releaseDocument([council[0] as object, council[3] as object]).context, 1);
    expect(schema.properties.advisors).toBeUndefined();
    expect(schema.required).toEqual(['calls', 'output']);
  });

  it('stays within the strict subset, in the same order (MODEL-7)', () => {
    const strict = toStrictSchema(solutionAt(context, 0).schema);
    expect(strict.strict).toBe(true);
    expect(Object.keys((strict.schema as { properties: object }).properties)).toEqual(['advisors', 'calls', 'output']);
  });

  it('renders each advisor with its role, when it speaks and its scopes as a focus, not a limit (ADV-7)', () => {
    const { rendered } = solutionAt(releaseDocument([riskAnalyst]).context, 0);
    const system = rendered.messages.at(-1)?.content ?? '';
    expect(system).toContain('riskAnalyst (speaks at every step): Analyze risks');
    expect(system).toContain('Focus on †state.deploymentHistory (a focus, not a limit');
    // The focus hides nothing: the whole state is still in the prompt.
    expect(rendered.messages.map((message) => message.content).join('\n')).toContain('1.0 rolled back');
  });

  it('offers consult_advisor only when an on-demand advisor exists (ADV-8)', () => {
    const tools = (advisors: object[]) => collectTools(releaseDocument(advisors).context, new Map(), defaultHandlers());
    expect(tools([council[3] as object]).has('consult_advisor')).toBe(true);
    expect(tools([council[0] as object, council[1] as object]).has('consult_advisor')).toBe(false);
  });

  it('judges each answer: ids once, speakers present, votes well formed (ADV-5, ADV-6)', () => {
    const { schema, rendered } = solutionAt(context, 0);
    const validate = compileSchema(schema);
    const judge = (answer: Record<string, unknown>) => (validate(answer) ? rendered.checkAnswer(answer) : ['schema']);
    const opinion = (id: string, extra: object = {}) => ({ id, thought: `${id} thinks`, ...extra });
    expect(judge({ advisors: [opinion('opener'), opinion('monitor')], calls: [], output: null })).toEqual([]);
    expect(judge({ advisors: [opinion('monitor')], calls: [], output: null })).toEqual(['schema']);
    expect(judge({ advisors: [opinion('monitor'), opinion('monitor')], calls: [], output: null }).join()).toContain('twice');
    expect(judge({ advisors: [opinion('opener'), opinion('monitor')], calls: [], output: 'done' }).join()).toContain('closer');
    expect(judge({ advisors: [opinion('opener'), opinion('monitor'), opinion('closer')], calls: [], output: 'done' })).toEqual([]);
    expect(judge({ advisors: [opinion('opener', { calls: '{"deploy": 10, "delay": 95}' }), opinion('monitor')], calls: [], output: null })).toEqual([]);
    expect(judge({ advisors: [opinion('opener', { calls: '{"deploy": 101}' }), opinion('monitor')], calls: [], output: null }).join()).toContain(
      'from 0 to 100',
    );
    expect(judge({ advisors: [opinion('opener', { calls: '{"launch": 50}' }), opinion('monitor')], calls: [], output: null }).join()).toContain(
      '"launch", which is not a tool',
    );
    expect(judge({ advisors: [opinion('opener', { calls: 'deploy: 10' }), opinion('monitor')], calls: [], output: null }).join()).toContain('not inline JSON');
    expect(judge({ advisors: [opinion('opener', { calls: '[10]' }), opinion('monitor')], calls: [], output: null }).join()).toContain('expected an object');
  });

  it('asks an instanced advisor for one opinion per instance, each with its _instance', () => {
    const instanced = { type: 'advisor', id: 'perItem', on: 'request', isInstanced: true, role: 'Judges each item.' };
    const context = releaseDocument(
      [instanced],
      [
        { type: 'data', kind: 'item', data: 'A', _instance: 'a' },
        { type: 'data', kind: 'item', data: 'B', _instance: 'b' },
      ],
    ).context;
    const { schema, rendered } = solutionAt(context, 0);
    const items = schema.properties.advisors?.items as { properties: Record<string, unknown>; required: string[] };
    expect(items.properties._instance).toMatchObject({ enum: ['a', 'b'] });
    expect(items.required).toContain('_instance');
    expect(schema.properties.advisors?.minItems).toBe(2);
    const opinion = (instance: string) => ({ id: 'perItem', _instance: instance, thought: instance });
    expect(rendered.checkAnswer({ advisors: [opinion('a'), opinion('b')], calls: [], output: null })).toEqual([]);
    expect(rendered.checkAnswer({ advisors: [opinion('a'), opinion('a')], calls: [], output: null }).join()).toContain('perItem (instance "b")');
  });

  it('rewrites an advisor schema that refers to its own definitions, so the composed schema still compiles', () => {
    const referring = {
      ...riskAnalyst,
      schema: { type: 'object', $defs: { level: { enum: ['low', 'high'] } }, properties: { risk: { $ref: '#/$defs/level' } }, required: ['risk'] },
    };
    const { schema } = solutionAt(releaseDocument([referring]).context, 0);
    const validate = compileSchema(schema);
    expect(validate({ advisors: [{ id: 'riskAnalyst', risk: 'high' }], calls: [], output: null })).toBe(true);
    expect(validate({ advisors: [{ id: 'riskAnalyst', risk: 'medium' }], calls: [], output: null })).toBe(false);
  });
});

describe('a run with advisors (ADV-5, ADV-6, ADV-9, TRACE-16)', () => {
  const speaks = {
    advisors: [{ id: 'riskAnalyst', thought: 'Integration tests are missing: high risk.', calls: '{"deploy": 10, "delay": 95}' }],
    calls: [{ _tool: 'delay', _reasoningForCall: 'riskAnalyst strongly advises delaying.', days: 2 }],
    output: null,
  };

  it('traces each opinion with its vote, keeps it as †advisors data and shows it in the next prompt', async () => {
    const { seen, activities } = counting();
    const { result, events, model } = await run(
      releaseDocument([riskAnalyst]),
      [
        { match: { step: 0 }, solution: speaks },
        {
          match: { step: 1 },
          solution: {
            advisors: [{ id: 'riskAnalyst', thought: 'Delayed: fine.' }],
            calls: [{ _tool: 'delay', days: '†advisors.riskAnalyst.thought' }],
            output: 'delayed',
          },
        },
      ],
      activities,
    );
    expect(result.ok).toBe(true);
    const opinions = of(events, 'advisor.opinion');
    expect(opinions[0]).toMatchObject({ step: 0, call: null, advisor: 'riskAnalyst', instance: null, votes: { deploy: 10, delay: 95 } });
    expect(opinions[1]).toMatchObject({ step: 1, advisor: 'riskAnalyst', votes: null });
    expect(model.requests[1]?.messages.map((message) => message.content).join('\n')).toContain('Integration tests are missing');
    // The opinion is data: the second answer's call reads it by reference (its type is then wrong, which fails that call only).
    expect(seen.map((call) => call._tool)).toEqual(['delay']);
    const failed = of(events, 'call.failed');
    expect(JSON.stringify(failed)).toContain('invalid_params');
  });

  it('re-asks an answer that lacks a speaking advisor, and never runs its calls', async () => {
    const { seen, activities } = counting();
    const { result, events } = await run(
      releaseDocument([riskAnalyst]),
      [
        { match: { step: 0 }, solution: { calls: [{ _tool: 'deploy', version: '1.1' }], output: null } },
        { match: { step: 0 }, solution: speaks },
        { match: { step: 1 }, solution: { advisors: [{ id: 'riskAnalyst', thought: 'ok' }], calls: [], output: 'delayed' } },
      ],
      activities,
    );
    expect(result.ok).toBe(true);
    expect(seen.map((call) => call._tool)).toEqual(['delay']);
    const reask = of(events, 'model.request').find((event) => event.attempt === 1);
    expect(JSON.stringify(reask)).toContain('riskAnalyst');
  });

  it('re-asks a vote that is not inline JSON of known tools, saying what is wrong', async () => {
    const { events, result } = await run(releaseDocument([riskAnalyst]), [
      { match: { step: 0 }, solution: { ...speaks, advisors: [{ id: 'riskAnalyst', thought: 't', calls: '{"ship": 80}' }] } },
      { match: { step: 0 }, solution: { ...speaks, calls: [], output: 'ok' } },
    ]);
    expect(result.ok).toBe(true);
    const reask = of(events, 'model.request').find((event) => event.attempt === 1);
    expect(JSON.stringify(reask)).toContain('\\"ship\\", which is not a tool here');
  });

  it('fails with invalid_model_output when every answer keeps breaking the advisors rule', async () => {
    const bad = { match: { step: 0 }, repeat: true, solution: { calls: [], output: 'x' } };
    const { result } = await run(releaseDocument([riskAnalyst]), [bad]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('invalid_model_output');
    expect(!result.ok && result.error.message).toContain('advisors lacks the opinion of riskAnalyst');
  });

  it('asks a finish advisor only in the answer that ends the run', async () => {
    const closer = { type: 'advisor', id: 'closer', on: 'finish', role: 'Decides whether the work is done.' };
    const { result, events } = await run(releaseDocument([closer]), [
      { match: { step: 0 }, solution: { calls: [{ _tool: 'delay', days: 1 }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'done' } },
      { match: { step: 1 }, solution: { advisors: [{ id: 'closer', thought: 'Done.' }], calls: [], output: 'done' } },
    ]);
    expect(result.ok && result.output).toBe('done');
    expect(of(events, 'model.request').map((event) => [event.step, event.attempt])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
    ]);
  });

  it('consults an on-demand advisor through consult_advisor: the opinion is kept, traced with its call, and shown next', async () => {
    const counsel = {
      type: 'advisor',
      id: 'counsel',
      role: 'Legal view.',
      schema: { type: 'object', properties: { verdict: { enum: ['ok', 'block'] } }, required: ['verdict'] },
    };
    const { result, events, model } = await run(releaseDocument([counsel]), [
      {
        match: { step: 0 },
        solution: { calls: [{ _tool: 'consult_advisor', opinion: { id: 'counsel', verdict: 'block', calls: '{"delay": 90}' } }], output: null },
      },
      { match: { step: 1, contains: 'block' }, solution: { calls: [], output: 'blocked' } },
    ]);
    expect(result.ok && result.output).toBe('blocked');
    expect(of(events, 'advisor.opinion')).toEqual([
      expect.objectContaining({
        step: null,
        call: '0.0',
        advisor: 'counsel',
        instance: null,
        votes: { delay: 90 },
        opinion: { id: 'counsel', verdict: 'block', calls: '{"delay": 90}' },
      }),
    ]);
    expect(model.requests[0]?.messages.at(-1)?.content).toContain('on demand: silent unless you consult it with the tool consult_advisor');
    // The call's result is the write that keeps the opinion.
    expect(of(events, 'call.completed')[0]).toMatchObject({
      call: '0.0',
      result: { type: 'data', kind: 'advisors', _path: 'counsel', data: { verdict: 'block' } },
    });
  });

  it('consults an advisor whose schema refers to its own definitions, judging the opinion by them', async () => {
    const counsel = {
      type: 'advisor',
      id: 'counsel',
      role: 'Legal view.',
      schema: { type: 'object', $defs: { verdict: { enum: ['ok', 'block'] } }, properties: { verdict: { $ref: '#/$defs/verdict' } }, required: ['verdict'] },
    };
    const { result, events } = await run(releaseDocument([counsel]), [
      { match: { step: 0 }, solution: { calls: [{ _tool: 'consult_advisor', opinion: { id: 'counsel', verdict: 'maybe' } }], output: null } },
      { match: { step: 0 }, solution: { calls: [{ _tool: 'consult_advisor', opinion: { id: 'counsel', verdict: 'block' } }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'judged' } },
    ]);
    expect(result.ok && result.output).toBe('judged');
    // "maybe" is no verdict of the advisor's own definitions: that answer was re-asked.
    expect(of(events, 'model.request').map((event) => event.attempt)).toEqual([0, 1, 0]);
    expect(of(events, 'advisor.opinion')).toEqual([expect.objectContaining({ advisor: 'counsel', opinion: { id: 'counsel', verdict: 'block' } })]);
  });

  it("fails a consultation whose vote names no tool, as the call's error", async () => {
    const counsel = { type: 'advisor', id: 'counsel', role: 'Legal view.' };
    const { result, events } = await run(releaseDocument([counsel]), [
      { match: { step: 0 }, solution: { calls: [{ _tool: 'consult_advisor', opinion: { id: 'counsel', thought: 't', calls: '{"ship": 1}' } }], output: null } },
      { match: { step: 1, contains: 'ship' }, solution: { calls: [], output: 'seen' } },
    ]);
    expect(result.ok && result.output).toBe('seen');
    expect(of(events, 'call.failed')[0]).toMatchObject({ tool: 'consult_advisor', error: { code: 'invalid_params' } });
    expect(of(events, 'advisor.opinion')).toHaveLength(0);
  });
});
