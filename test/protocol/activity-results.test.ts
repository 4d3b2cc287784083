/** An Activity's result is made plain JSON once, where it returns (TOOL-20): what JSON cannot hold fails the call, not the run. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';

const document = {
  meta: { name: 'results' },
  context: [
    { type: 'system', text: 'You help.' },
    { type: 'tool', tool: { produce: { description: 'Produces a value.', properties: {} } } },
  ],
  schema: { type: 'string' },
};

/** Runs one call of `produce` (writing its result to †state.value) and a final answer; returns the events. */
async function runWith(produce: Activity) {
  const runtime = new Runtime({ activities: { produce } });
  const model = new ReplayModel([
    { match: { step: 0 }, solution: { calls: [{ _tool: 'produce', _outputPath: '†state.value' }], output: null } },
    { match: { step: 1 }, solution: { calls: [], output: 'went on' } },
  ]);
  const sink = memorySink();
  const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]) });
  return { result, events: sink.events, prompt: JSON.stringify(model.requests[1]?.messages ?? []) };
}

describe('Activity results (TOOL-20)', () => {
  it('fails a call whose result is a BigInt as activity_error, naming it, and the run goes on', async () => {
    const { result, events } = await runWith(() => 5n);
    expect(result.ok && result.output).toBe('went on');
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({
      error: { code: 'activity_error', message: 'The Activity "produce" failed: the result is not JSON: it is a BigInt (5n).' },
    });
    expect(events.some((event) => event.event === 'call.completed')).toBe(false);
  });

  it('names the JSON pointer of the part that is not JSON', async () => {
    const { events } = await runWith(() => ({ rows: [{ id: 1 }, { id: Symbol('x') }] }));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({
      error: { code: 'activity_error', message: expect.stringContaining('the result is not JSON: /rows/1/id is a Symbol (x)') },
    });
  });

  it('writes the JSON form of a result (toJSON used, undefined properties left out), not the object returned', async () => {
    const returned = { when: new Date(0), skipped: undefined, nested: { ok: true } };
    const { events, prompt } = await runWith(() => returned);
    const completed = events.find((event) => event.event === 'call.completed');
    expect(completed?.result).toEqual({ when: '1970-01-01T00:00:00.000Z', nested: { ok: true } });
    expect(completed?.result).not.toBe(returned);
    expect(prompt).toContain('1970-01-01T00:00:00.000Z');
  });

  it('keeps undefined as "no result": the call completes with result null and writes nothing', async () => {
    const { result, events } = await runWith(() => undefined);
    expect(result.ok).toBe(true);
    expect(events.find((event) => event.event === 'call.completed')).toMatchObject({ result: null });
  });
});
