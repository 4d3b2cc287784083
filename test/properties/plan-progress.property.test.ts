/**
 * PLAN-10 as a property: for generated plans and interruption points, a call whose result the
 * interrupted run recorded is never executed again by a run given its context (LOOP-17), even when
 * the model repeats the whole plan; and every call of the plan has run once both runs are done.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callKey } from '../../src/protocol/calls/call-ledger.js';
import type { Model } from '../../src/protocol/model.js';
import { stepModel } from '../helpers/step-model.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Call, Message, PlanMessage } from '../../src/protocol/types.js';

/** A plan of `size` calls; call i may read what an earlier call wrote, and may write nothing. */
const plans = fc
  .integer({ min: 1, max: 7 })
  .chain((size) =>
    fc.tuple(
      fc.constant(size),
      fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: size, maxLength: size }),
      fc.array(fc.boolean(), { minLength: size, maxLength: size }),
    ),
  )
  .map(([size, reads, writes]) =>
    Array.from({ length: size }, (_, index): Call => {
      const call: Call = { _tool: 'work', n: index };
      const read = reads[index];
      // Only a call that writes can be read; an earlier one, so the plan stays acyclic.
      const writers = Array.from({ length: index }, (__, earlier) => earlier).filter((earlier) => writes[earlier]);
      if (read !== undefined && writers.length > 0) call.after = `†state.c${writers[read % writers.length]}`;
      if (writes[index]) call._outputPath = `†state.c${index}`;
      return call;
    }),
  );

const tools = { type: 'tool', tool: { work: { properties: { n: { type: 'number' }, after: {} } } } };

/** A model that repeats the whole plan, then answers. */
function repeating(plan: Call[]): Model {
  return stepModel(
    () => ({ calls: plan, output: null }),
    () => ({ calls: [], output: 'done' }),
  );
}

/** The calls whose results a context records (act 008 `_call`) or whose plan marks them done. */
function recordedIn(context: readonly Message[]): Set<string> {
  const keys = new Set<string>();
  for (const message of context) {
    if (typeof message._call === 'object' && message.type !== 'error') keys.add(callKey(message._call as Call));
    if (message.type === 'plan') {
      const plan = message as PlanMessage;
      plan._status?.forEach((status, index) => {
        if (status === 'done' && plan.calls[index]) keys.add(callKey(plan.calls[index]));
      });
    }
  }
  return keys;
}

describe('nothing recorded runs twice (PLAN-10, LOOP-17)', () => {
  it('for generated plans cut after any number of calls, the run given the context never re-executes a recorded call', async () => {
    await fc.assert(
      fc.asyncProperty(plans, fc.nat({ max: 8 }), async (plan, cutAfter) => {
        const first: number[] = [];
        const controller = new AbortController();
        const interrupted = new Runtime({
          activities: {
            work: async (call) => {
              first.push(call.n as number);
              if (first.length >= cutAfter) controller.abort();
              await Promise.resolve();
              return `done ${String(call.n)}`;
            },
          },
        });
        const document = { context: [tools, { type: 'plan', calls: plan }], schema: { type: 'string' } };
        const cut = await interrupted.run(interrupted.validate(document), { signal: controller.signal, model: repeating(plan) });
        const context = cut.context ?? [];
        const recorded = recordedIn(context);

        const second: Call[] = [];
        const resumed = new Runtime({
          activities: {
            work: (call) => {
              second.push(call);
              return `done ${String(call.n)}`;
            },
          },
        });
        const result = await resumed.run(resumed.validate({ context, schema: { type: 'string' } }), { model: repeating(plan) });
        expect(result.ok).toBe(true);
        const again = second.map((call) => plan[call.n as number] as Call).filter((call) => recorded.has(callKey(call)));
        expect(again).toEqual([]);
        // Every call ran in one run or the other.
        const ran = new Set([...first, ...second.map((call) => call.n as number)]);
        expect([...ran].sort((a, b) => a - b)).toEqual(plan.map((_, index) => index));
      }),
      { numRuns: 60 },
    );
  });
});
