/** Unit tests of src/protocol/calls/activity-registry.ts and what the core does with registration options (TOOL-19, LOOP-10). */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { ActivityRegistry } from '../../src/protocol/calls/activity-registry.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { memorySink, Tracer } from '../../src/protocol/trace/trace.js';

describe('ActivityRegistry', () => {
  it('registers, replaces and lists Activities, built-in (@) names left out of the list', () => {
    const first: Activity = () => 1;
    const second: Activity = () => 2;
    const registry = new ActivityRegistry().register('a', first).register('@builtin', first).register('a', second, { runsUntrusted: true });
    expect(registry.get('a')).toBe(second);
    expect(registry.has('@builtin')).toBe(true);
    expect(registry.list()).toEqual(['a']);
    expect([...registry.keys()]).toEqual(['a', '@builtin']);
    expect(registry.registration('a')).toEqual({ name: 'a', activity: second, runsUntrusted: true, ownsCancellation: false });
    expect(registry.registration('@builtin')).toMatchObject({ runsUntrusted: false, ownsCancellation: false });
    expect(registry.get('missing')).toBeUndefined();
  });
});

describe('registration options in a run', () => {
  const document = {
    meta: { name: 'r' },
    context: [{ type: 'tool', tool: { act: { properties: {}, _output: { type: 'string' } } } }],
    schema: { type: 'string' },
  };
  const model = () =>
    new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'act', _outputPath: '†output' }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'fallback' } },
    ]);

  it('runs an Activity for an untrusted document only when it is registered as runsUntrusted', async () => {
    for (const runsUntrusted of [false, true]) {
      const runtime = new Runtime().registerActivity('act', () => 'done', { runsUntrusted });
      const sink = memorySink();
      const result = await runtime.run(document, { model: model(), trusted: false, tracer: new Tracer([sink]) });
      expect(result.ok && result.output).toBe(runsUntrusted ? 'done' : 'fallback');
      const failed = sink.events.find((event) => event.event === 'call.failed');
      expect(failed === undefined).toBe(runsUntrusted);
    }
  });

  it('lists the registered names (an array) when no Activity of the asked name exists', async () => {
    const runtime = new Runtime().registerActivity('other', () => 'x');
    const sink = memorySink();
    const tool = { type: 'tool', tool: { act: { properties: {}, _activity: 'nope', _output: { type: 'string' } } } };
    await runtime.run({ ...document, context: [tool] }, { model: model(), tracer: new Tracer([sink]) });
    const failed = sink.events.find((event) => event.event === 'call.failed');
    expect(failed?.error).toMatchObject({ code: 'activity_error', message: expect.stringContaining('registered: other') });
  });
});
