/** Waiting for Activities (spec/tools-and-activities.md TOOL-24, spec/errors.md ERR-8): the activity timeout, and Activities nothing can settle failed on demand. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { RequestDocument } from '../../src/protocol/types.js';
import { waitFor } from '../helpers/cli.js';

const document = {
  meta: { name: 'run' },
  context: [{ type: 'tool', tool: { wait: { type: 'object', properties: {} }, quick: { type: 'object', properties: {} } } }],
  schema: { type: 'string' },
} as RequestDocument;

describe('the activity timeout (TOOL-24)', () => {
  it('fails a call whose Activity runs longer with activity_error the model sees, aborting the signal the Activity was handed; a quick one is untouched', async () => {
    let reason: unknown;
    const wait: Activity = (_call, _tool, _context, environment) =>
      new Promise((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        environment.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reason = environment.signal.reason;
        });
      });
    const quick: Activity = async () => 'quick';
    const runtime = new Runtime({ activities: { wait, quick }, activityTimeoutMs: 50 });
    const model = new ReplayModel([
      { solution: { calls: [{ _tool: 'wait' }, { _tool: 'quick', _outputPath: '†state.quick' }], output: null } },
      { solution: { calls: [], output: 'went on' } },
    ]);
    const sink = memorySink();
    const result = await runtime.run(document, { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('went on');
    const failed = sink.events.filter((event) => event.event === 'call.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ tool: 'wait', error: { code: 'activity_error', timeoutMs: 50, activity: 'wait' } });
    expect(reason).toMatchObject({ code: 'activity_error' });
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('ran longer than the activity timeout of 0.05 s');
    expect(JSON.stringify(result.ok && result.context)).toContain('quick');
  });
});

describe('Activities that can never finish (ERR-8)', () => {
  it('fails each pending Activity on demand: its call and its run fail with activity_error naming the Activity and the call', async () => {
    const runtime = new Runtime({ activities: { wait: () => new Promise(() => undefined) } });
    const model = new ReplayModel([{ solution: { calls: [{ _tool: 'wait' }], output: null } }]);
    const sink = memorySink();
    const running = runtime.run(document, { model, tracer: new Tracer([sink]) });
    await waitFor(() => sink.events.some((event) => event.event === 'call.started'));
    const run = sink.events[0]?.run;
    expect(runtime.pendingActivities.failStalled()).toEqual([{ activity: 'wait', call: '0.0', tool: 'wait', run }]);
    const result = await running;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'activity_error', data: { stalled: true, activity: 'wait', call: '0.0' } });
    expect(result.error.message).toContain('The Activity "wait" of the call 0.0 to "wait" can never finish');
    expect(sink.events.at(-1)).toMatchObject({ event: 'run.failed', code: 'activity_error' });
    expect(model.requests).toHaveLength(1);
    // Nothing is left waited for.
    expect(runtime.pendingActivities.failStalled()).toEqual([]);
  });
});
