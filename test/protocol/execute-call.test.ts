/** Executing one call (src/protocol/calls/execute-call.ts): which Activity runs it, the meta a tool fixes, latent results, where results and failures are written. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import type { Activity, RunOptions } from '../../src/protocol/contracts.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call } from '../../src/protocol/types.js';

/** A Request offering `tools` whose answer is a string. */
const documentWith = (tools: Record<string, object>) => ({
  meta: { name: 'calls' },
  context: [{ type: 'system', text: 'You help.' }, ...Object.entries(tools).map(([name, tool]) => ({ type: 'tool', tool: { [name]: tool } }))],
  schema: { type: 'string' },
});

/**
 * Runs a document whose model makes `calls` at step 0 and answers 'done' at step 1; returns the
 * result, the trace and what the model was shown at step 1.
 */
async function runCalls(runtime: Runtime, tools: Record<string, object>, calls: object[], options: RunOptions = {}) {
  const model = new ReplayModel([
    { match: { step: 0 }, solution: { calls, output: null } },
    { match: { step: 1 }, solution: { calls: [], output: 'done' } },
  ]);
  const sink = memorySink();
  const result = await runtime.run(runtime.validate(documentWith(tools)), { model, tracer: new Tracer([sink]), ...options });
  const failed = sink.events.filter((event) => event.event === 'call.failed').map((event) => event.error as { code: string; message: string });
  return { result, events: sink.events, failed, shown: JSON.stringify(model.requests[1]?.messages ?? []) };
}

const NOTE = { description: 'Notes a text.', properties: { text: { type: 'string' } }, required: ['text'] };

describe('executing a call', () => {
  it('runs the Activity a tool fixes with _activity, and refuses a call asking for another (TOOL-17)', async () => {
    const ran: string[] = [];
    const runtime = new Runtime({
      activities: {
        mailer: (call) => {
          ran.push(`mailer ${String(call.text)}`);
          return 'sent';
        },
        other: () => {
          ran.push('other');
          return 'wrong';
        },
      },
    });
    const send = { ...NOTE, properties: { ...NOTE.properties, _activity: { const: 'mailer' } } };
    const { failed, events } = await runCalls(runtime, { send }, [
      { _tool: 'send', text: 'hello', _outputPath: '†state.sent' },
      { _tool: 'send', text: 'again', _activity: 'other' },
    ]);
    expect(ran).toEqual(['mailer hello']);
    expect(events.find((event) => event.event === 'call.completed')).toMatchObject({ tool: 'send', result: 'sent' });
    expect(failed.map((error) => [error.code, error.message])).toEqual([
      ['invalid_params', 'The tool "send" fixes _activity to "mailer"; the call asked for "other".'],
    ]);
  });

  it('refuses a meta-property the tool does not offer, so a model cannot pick an Activity its designer did not', async () => {
    const ran: string[] = [];
    const runtime = new Runtime({ activities: { note: () => ran.push('note'), secret: () => ran.push('secret') } });
    const { failed } = await runCalls(runtime, { note: NOTE }, [{ _tool: 'note', text: 'x', _activity: 'secret' }]);
    expect(ran).toEqual([]);
    expect(failed.map((error) => [error.code, error.message])).toEqual([
      ['invalid_params', 'The tool "note" does not let calls choose _activity; leave it out.'],
    ]);
  });

  it('checks an Activity’s result against the tool’s _output schema, and writes only a result that matches', async () => {
    const ratings = [4, 9];
    const runtime = new Runtime({ activities: { rate: () => ratings.shift() } });
    const rate = { description: 'A rating.', properties: { _output: { type: 'integer', minimum: 1, maximum: 5 } } };
    const { events, failed } = await runCalls(runtime, { rate }, [
      { _tool: 'rate', _outputPath: '†state.first' },
      { _tool: 'rate', _outputPath: '†state.second' },
    ]);
    expect(events.filter((event) => event.event === 'call.completed').map((event) => event.result)).toEqual([4]);
    expect(failed.map((error) => error.code)).toEqual(['output_schema_validation_failed']);
    expect(failed[0]?.message).toMatch(/^The result of "rate" does not match its _output schema: /);
  });

  it('writes a failed call’s error to the last of its alternative outcomes, where the next call reads it (VAR-19)', async () => {
    const notes: unknown[] = [];
    const runtime = new Runtime({
      activities: {
        pay: () => {
          throw new Error('card declined');
        },
        note: (call: Call) => {
          notes.push(call.text);
          return 'noted';
        },
      },
    });
    const pay = { description: 'Pays.', properties: {} };
    const { result, failed } = await runCalls(runtime, { pay, note: NOTE }, [
      { _tool: 'pay', _outputPath: '†state.receipt || †state.error' },
      { _tool: 'note', text: '†state.error.message' },
    ]);
    expect(result.ok).toBe(true);
    expect(failed.map((error) => error.code)).toEqual(['activity_error']);
    expect(notes).toEqual(['The Activity "pay" failed: card declined']);
  });

  it('writes a result naming one alternative to that alternative only (VAR-10)', async () => {
    const notes: unknown[] = [];
    const runtime = new Runtime({
      activities: {
        pay: () => ({ 'state.receipt': 'r-17' }),
        note: (call: Call) => {
          notes.push(call.text);
          return 'noted';
        },
      },
    });
    const pay = { description: 'Pays.', properties: {} };
    const { failed } = await runCalls(runtime, { pay, note: NOTE }, [
      { _tool: 'pay', _outputPath: '†state.receipt || †state.error' },
      { _tool: 'note', text: '†state.receipt' },
    ]);
    expect(failed).toEqual([]);
    expect(notes).toEqual(['r-17']);
  });

  it('appends a message an Activity returns as it is, and refuses an invalid one as activity_error', async () => {
    const runtime = new Runtime({
      activities: {
        remember: () => ({ type: 'text', text: 'Remember the milk.' }),
        broken: () => ({ type: 'text', text: 42 }),
      },
    });
    const empty = { description: 'No parameters.', properties: {} };
    const { shown, failed } = await runCalls(runtime, { remember: empty, broken: empty }, [{ _tool: 'remember' }, { _tool: 'broken' }]);
    expect(shown).toContain('Remember the milk.');
    expect(failed.map((error) => error.code)).toEqual(['activity_error']);
    expect(failed[0]?.message).toMatch(/^The Activity of "broken" returned an invalid message: /);
  });

  it('does not run a local Activity for an untrusted document: the call fails as delegate_forbidden', async () => {
    const ran: string[] = [];
    const runtime = new Runtime({ activities: { note: () => ran.push('note') } });
    const { failed, result } = await runCalls(runtime, { note: NOTE }, [{ _tool: 'note', text: 'x' }], { trusted: false });
    expect(result.ok).toBe(true);
    expect(ran).toEqual([]);
    expect(failed.map((error) => error.code)).toEqual(['delegate_forbidden']);
    expect(failed[0]?.message).toContain('is not trusted to run the local Activity "note"');
  });

  it('aborts the signal it hands an Activity when the activity timeout runs out, and fails the call (TOOL-24)', async () => {
    let aborted = false;
    const waits: Activity = (_call, _tool, _context, environment) =>
      new Promise((resolve) => {
        environment.signal.addEventListener('abort', () => {
          aborted = true;
          resolve('too late');
        });
      });
    const runtime = new Runtime({ activities: { note: waits }, activityTimeoutMs: 50 });
    const { failed, result } = await runCalls(runtime, { note: NOTE }, [{ _tool: 'note', text: 'x' }]);
    expect(result.ok).toBe(true);
    expect(aborted).toBe(true);
    expect(failed.map((error) => error.code)).toEqual(['activity_error']);
  });
});
