/** Property test of advisors (spec/advisors.md ADV-4, ADV-5): at every step the Solution requires exactly the opinions of the advisors whose `on` says they speak then. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { renderContext } from '../../src/protocol/messages/render-context.js';
import { compileSchema } from '../../src/protocol/schemas.js';
import { collectTools, composeSolutionSchema } from '../../src/protocol/tools/tools.js';
import type { Message } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(200);

type On = 'start' | 'finish' | 'request' | null;

interface AdvisorSpec {
  on: On;
  isInstanced: boolean;
}

/** One opinion: an advisor index and the instance it is about (or none). */
interface Seat {
  advisor: number;
  instance: string | undefined;
}

/** How the answer's opinions are drawn: the right ones (with optional ones picked by `picks`), then changed by one mistake, or at random. */
type Mode = 'right' | 'one-missing' | 'one-twice' | 'one-extra' | 'random';

interface Scenario {
  advisors: AdvisorSpec[];
  instances: string[];
  step: number;
  finishing: boolean;
  mode: Mode;
  picks: number[];
  /** Opinions of the `random` mode, duplicates possible. */
  random: Seat[];
}

const INSTANCES = ['a', 'b', 'c'];

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc
  .record({
    advisors: fc.array(fc.record({ on: fc.constantFrom<On>('start', 'finish', 'request', null), isInstanced: fc.boolean() }), { minLength: 1, maxLength: 5 }),
    instances: fc.subarray(INSTANCES),
    step: fc.nat({ max: 3 }),
    finishing: fc.boolean(),
  })
  .chain((base) =>
    fc.record({
      advisors: fc.constant(base.advisors),
      instances: fc.constant(base.instances),
      step: fc.constant(base.step),
      finishing: fc.constant(base.finishing),
      mode: fc.constantFrom<Mode>('right', 'one-missing', 'one-twice', 'one-extra', 'random'),
      picks: fc.array(fc.nat({ max: 1000 }), { minLength: 4, maxLength: 4 }),
      random: fc.array(
        fc.record({ advisor: fc.nat({ max: base.advisors.length - 1 }), instance: fc.constantFrom<string | undefined>(undefined, ...INSTANCES) }),
        { maxLength: 8 },
      ),
    }),
  );

const idOf = (index: number) => `adv${index}`;

/** The opinions an advisor gives when it speaks: one per instance when instanced and there are instances, else one. */
function seatsOf(spec: AdvisorSpec, instances: readonly string[]): (string | undefined)[] {
  return spec.isInstanced && instances.length > 0 ? [...instances] : [undefined];
}

/** The model of ADV-4: which opinions must be given at this step, and which may be. */
function expected(scenario: Scenario): { must: Set<string>; may: Set<string> } {
  const must = new Set<string>();
  const may = new Set<string>();
  scenario.advisors.forEach((spec, index) => {
    const speaks = spec.on === 'request' || (spec.on === 'start' && scenario.step === 0) || spec.on === 'finish';
    if (!speaks) return;
    const required = spec.on !== 'finish' || scenario.finishing;
    for (const instance of seatsOf(spec, scenario.instances)) {
      const key = JSON.stringify([idOf(index), instance ?? null]);
      may.add(key);
      if (required) must.add(key);
    }
  });
  return { must, may };
}

const keyOf = (seat: Seat) => JSON.stringify([idOf(seat.advisor), seat.instance ?? null]);

/** The opinions the answer holds, drawn by the scenario's mode. */
function opinionsOf(scenario: Scenario): Seat[] {
  if (scenario.mode === 'random') return scenario.random;
  const { must, may } = expected(scenario);
  // Every opinion one could write, those no advisor gives now included (the material of an extra one).
  const all: Seat[] = scenario.advisors.flatMap((_, advisor) => [undefined, ...INSTANCES].map((instance) => ({ advisor, instance })));
  const [first = 0, second = 0, third = 0, fourth = 0] = scenario.picks;
  const right = all.filter((seat) => must.has(keyOf(seat)) || (may.has(keyOf(seat)) && (first + all.indexOf(seat)) % 2 === 0));
  const at = <T>(list: T[], pick: number) => list[pick % Math.max(list.length, 1)];
  switch (scenario.mode) {
    case 'right':
      return right;
    case 'one-missing':
      return right.filter((_, index) => index !== second % Math.max(right.length, 1));
    case 'one-twice': {
      const twice = at(right, third);
      return twice === undefined ? right : [...right, twice];
    }
    case 'one-extra': {
      const extra = at(
        all.filter((seat) => !right.some((chosen) => keyOf(chosen) === keyOf(seat))),
        fourth,
      );
      return extra === undefined ? right : [...right, extra];
    }
  }
}

function contextOf(scenario: Scenario): Message[] {
  return [
    { type: 'tool', tool: { act: { properties: { x: { type: 'string' } } } } },
    ...scenario.instances.map((instance) => ({ type: 'data', kind: 'item', data: instance, _instance: instance })),
    ...scenario.advisors.map((spec, index) => ({ type: 'advisor', id: idOf(index), role: `Advisor ${index}.`, on: spec.on, isInstanced: spec.isInstanced })),
  ];
}

describe('advisors', () => {
  it('the Solution requires exactly the advisors whose `on` says they speak at that step: an answer passes iff it gives each of them once and no one else', () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const context = contextOf(scenario);
        const handlers = defaultHandlers();
        const rendered = renderContext(context, handlers, {}, { step: scenario.step });
        const schema = composeSolutionSchema(
          collectTools(context, new Map(), handlers),
          true,
          () => false,
          rendered.solutionProperties,
          scenario.instances,
          false,
          {
            required: rendered.solutionRequired,
            definitions: rendered.solutionDefinitions,
          },
        );
        const validate = compileSchema(schema);
        const seats = opinionsOf(scenario);
        const opinions = seats.map(({ advisor, instance }) => ({
          id: idOf(advisor),
          ...(instance === undefined ? {} : { _instance: instance }),
          thought: 'a view',
        }));
        const answer: Record<string, unknown> = {
          ...(opinions.length > 0 ? { advisors: opinions } : {}),
          calls: [],
          output: scenario.finishing ? 'done' : null,
        };
        const accepted = validate(answer) && rendered.checkAnswer(answer).length === 0;

        const { must, may } = expected(scenario);
        const keys = seats.map(keyOf);
        const unique = new Set(keys).size === keys.length;
        const shouldPass = unique && keys.every((key) => may.has(key)) && [...must].every((key) => keys.includes(key));
        expect(accepted, JSON.stringify({ answer, must: [...must], may: [...may], problems: rendered.checkAnswer(answer) })).toBe(shouldPass);

        // The part is offered exactly when someone may speak in it, and required exactly when someone must before the answer is known.
        const properties = (schema as { properties: Record<string, unknown>; required: string[] }).properties;
        expect('advisors' in properties).toBe(may.size > 0);
        expect(Object.keys(properties)[0]).toBe(may.size > 0 ? 'advisors' : 'calls');
      }),
      settings,
    );
  });
});
