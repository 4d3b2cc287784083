/** Property test of instances: a call on one instance never reads, sees or receives another instance's data. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

const NAMES = ['east', 'west', 'north', 'south', 'center'];

interface Scenario {
  tag: string;
  instances: { name: string; notes: boolean; callsInPlan: number; callsByModel: number }[];
  globalState: boolean;
  globalX: boolean;
  globalNotes: boolean;
  /** Some instance messages come before the global ones, some after: order must not matter. */
  globalsFirst: boolean;
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  tag: fc.stringMatching(/^[a-z0-9]{6}$/),
  instances: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).chain((names) =>
    fc.tuple(
      ...names.map((name) =>
        fc.record({
          name: fc.constant(name),
          notes: fc.boolean(),
          callsInPlan: fc.integer({ min: 0, max: 2 }),
          callsByModel: fc.integer({ min: 0, max: 2 }),
        }),
      ),
    ),
  ),
  globalState: fc.boolean(),
  globalX: fc.boolean(),
  globalNotes: fc.boolean(),
  globalsFirst: fc.boolean(),
});

const mark = (scenario: Scenario, what: string) => `MARK_${what}_${scenario.tag}`;

function documentOf(scenario: Scenario) {
  const globals: object[] = [];
  if (scenario.globalState)
    globals.push({ type: 'state', state: { g: mark(scenario, 'global'), ...(scenario.globalX ? { x: mark(scenario, 'globalx') } : {}) } });
  if (scenario.globalNotes) globals.push({ type: 'data', kind: 'notes', data: { shared: mark(scenario, 'globalnotes') } });
  const own = scenario.instances.flatMap((instance) => [
    {
      type: 'state',
      _instance: instance.name,
      state: { x: mark(scenario, `${instance.name}x`), [`only_${instance.name}`]: mark(scenario, `${instance.name}y`) },
    },
    ...(instance.notes
      ? [{ type: 'data', kind: 'notes', _instance: instance.name, data: { [`n_${instance.name}`]: mark(scenario, `${instance.name}notes`) } }]
      : []),
  ]);
  // Each instance's plan: read its x, write `seen`; a second call reads `seen` back (a dependency within the instance).
  const planned = scenario.instances.flatMap((instance) =>
    Array.from({ length: instance.callsInPlan }, (_, index) =>
      index === 0
        ? { _tool: 'peek', _instance: instance.name, x: '†state.x', _outputPath: '†state.seen' }
        : { _tool: 'peek', _instance: instance.name, x: '†state.seen', note: 'from †state.x', _outputPath: '†state.again' },
    ),
  );
  return {
    meta: { name: 'instances' },
    context: [
      { type: 'system', text: 'Work per instance.' },
      { type: 'tool', tool: { peek: { properties: { x: { type: 'string' }, note: { type: 'string' } }, required: ['x'], _scopes: ['state', 'notes'] } } },
      ...(scenario.globalsFirst ? [...globals, ...own] : [...own, ...globals]),
      ...(planned.length > 0 ? [{ type: 'plan', calls: planned }] : []),
    ],
    schema: { type: 'string' },
  };
}

describe('instances', () => {
  it('never lets a call on one instance read or see another instance’s data, in plans and in model steps', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const records: { instance: string | undefined; environment: string | undefined; seen: string }[] = [];
        const peek: Activity = (call, _tool, context, environment) => {
          records.push({ instance: call._instance, environment: environment.instance, seen: JSON.stringify({ call, context }) });
          return `echo:${String(call.x)}`;
        };
        const runtime = new Runtime({ activities: { peek } });
        const modelCalls = scenario.instances.flatMap((instance) =>
          Array.from({ length: instance.callsByModel }, () => ({ _tool: 'peek', _instance: instance.name, x: '†state.x', note: 'model' })),
        );
        const model = new ReplayModel([
          { match: { step: 0 }, solution: { calls: modelCalls, output: modelCalls.length === 0 ? 'done' : null } },
          { match: { step: 1 }, solution: { calls: [], output: 'done' } },
        ]);
        const sink = memorySink();
        const result = await runtime.run(runtime.validate(documentOf(scenario)), { model, tracer: new Tracer([sink]) });
        expect(result.ok).toBe(true);
        expect(sink.events.filter((event) => event.event === 'call.failed')).toEqual([]);

        const expectedCalls = scenario.instances.reduce((sum, instance) => sum + instance.callsInPlan + instance.callsByModel, 0);
        expect(records).toHaveLength(expectedCalls);
        for (const record of records) {
          const instance = scenario.instances.find((candidate) => candidate.name === record.instance);
          expect(instance, 'every call ran on its instance').toBeDefined();
          expect(record.environment).toBe(record.instance);
          // Its own data: x (which overrides a global x), its private field, its notes.
          expect(record.seen).toContain(mark(scenario, `${instance!.name}x`));
          expect(record.seen).toContain(mark(scenario, `${instance!.name}y`));
          if (instance!.notes) expect(record.seen).toContain(mark(scenario, `${instance!.name}notes`));
          expect(record.seen).not.toContain(mark(scenario, 'globalx'));
          // Global data is visible to every instance.
          if (scenario.globalState) expect(record.seen).toContain(mark(scenario, 'global'));
          if (scenario.globalNotes) expect(record.seen).toContain(mark(scenario, 'globalnotes'));
          // Nothing of any other instance.
          for (const other of scenario.instances) {
            if (other.name === instance!.name) continue;
            for (const what of ['x', 'y', 'notes']) expect(record.seen).not.toContain(mark(scenario, `${other.name}${what}`));
          }
        }
        // What the trace shows of each call (its resolved params) is its own instance's too.
        for (const event of sink.events.filter((candidate) => candidate.event === 'call.started')) {
          const params = JSON.stringify(event.params);
          for (const other of scenario.instances) {
            if (other.name === event.instance) continue;
            expect(params).not.toContain(mark(scenario, `${other.name}x`));
          }
        }
      }),
      settings,
    );
  });
});
