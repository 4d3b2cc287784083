/** An Activity ending its run (LOOP-18), and Activities whose parameters name context (CALL-10): the library's own hooks, with user Activities. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { DelegateError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { Activity } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Message, RequestDocument } from '../../src/protocol/types.js';

const document = (tools: Record<string, unknown>, context: Message[] = []): RequestDocument =>
  ({ meta: { name: 'run' }, context: [...context, { type: 'tool', tool: tools }], schema: { type: 'string' } }) as RequestDocument;

describe('an Activity ending its run (LOOP-18)', () => {
  it('fails the run with its error once the step settles: other calls finish, no further model call, not even the same answer output', async () => {
    const finished: string[] = [];
    const stop: Activity = (_call, _tool, _context, environment) => {
      environment.endRun(new DelegateError('insufficient_context', 'Stopped on purpose.', { request: { missing: ['x'], why: 'y' } }));
      environment.endRun(new DelegateError('worker_error', 'A second ending is ignored.'));
      return 'stopping';
    };
    const slow: Activity = async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished.push('slow');
      return 'slow done';
    };
    const runtime = new Runtime({ activities: { stop, slow } });
    const model = new ReplayModel([
      { solution: { calls: [{ _tool: 'stop' }, { _tool: 'slow', _outputPath: '†state.slow' }], output: 'would have ended the run' } },
      { solution: { calls: [], output: 'never asked' } },
    ]);
    const sink = memorySink();
    const result = await runtime.run(document({ stop: { type: 'object', properties: {} }, slow: { type: 'object', properties: {} } }), {
      model,
      tracer: new Tracer([sink]),
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'insufficient_context', message: 'Stopped on purpose.', data: { request: { missing: ['x'], why: 'y' } } });
    expect(finished).toEqual(['slow']);
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(result.context)).toContain('slow done');
    expect(sink.events.at(-1)).toMatchObject({ event: 'run.failed', code: 'insufficient_context' });
  });

  it('ends a run from a plan before any model call', async () => {
    const stop: Activity = (_call, _tool, _context, environment) => environment.endRun(new DelegateError('worker_error', 'No.'));
    const runtime = new Runtime({ activities: { stop } });
    const planned = document({ stop: { type: 'object', properties: {} } }, [{ type: 'plan', calls: [{ _tool: 'stop' }] }]);
    const model = new ReplayModel([{ solution: { calls: [], output: 'never' } }]);
    const result = await runtime.run(planned, { model });
    expect(result.ok || result.error.code).toBe('worker_error');
    expect(model.requests).toHaveLength(0);
  });
});

describe('parameters that name context (CALL-10)', () => {
  it('passes namesContext parameters as written, resolving the others', async () => {
    const seen: unknown[] = [];
    const runtime = new Runtime();
    runtime.registerActivity('ask', (call) => seen.push(call), { namesContext: ['names'] });
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'ask', names: ['†state.absent', '†state.x'], value: '†state.x' }], output: null } },
      { match: { step: 1 }, solution: { calls: [], output: 'ok' } },
    ]);
    const tools = { ask: { type: 'object', properties: { names: { type: 'array' }, value: { type: 'string' }, _activity: { const: 'ask' } } } };
    const result = await runtime.run(document(tools, [{ type: 'state', state: { x: 'X-VALUE' } }]), { model });
    expect(result.ok).toBe(true);
    expect(seen).toEqual([expect.objectContaining({ names: ['†state.absent', '†state.x'], value: 'X-VALUE' })]);
  });

  it('gives an Activity with scopesOf exactly the context its call names, and waits for a named reference', async () => {
    const contexts: Message[][] = [];
    const runtime = new Runtime();
    runtime.registerActivity(
      'look',
      (_call, _tool, context) => {
        contexts.push(context);
        return 'looked';
      },
      { namesContext: ['at'], scopesOf: (call) => call.at as string[] },
    );
    runtime.registerActivity('write', () => 'written later');
    const model = new ReplayModel([
      {
        match: { step: 0 },
        solution: {
          calls: [
            { _tool: 'look', at: ['†state.later', 'input'] },
            { _tool: 'write', _outputPath: '†state.later' },
          ],
          output: null,
        },
      },
      { match: { step: 1 }, solution: { calls: [], output: 'ok' } },
    ]);
    const tools = {
      look: { type: 'object', properties: { at: { type: 'array' }, _scopes: { const: ['state'] } } },
      write: { type: 'object', properties: {} },
    };
    const result = await runtime.run(
      document(tools, [
        { type: 'state', state: { other: 'OTHER' } },
        { type: 'input', input: { q: 'Q' } },
      ]),
      { model },
    );
    expect(result.ok).toBe(true);
    const seen = JSON.stringify(contexts);
    expect(seen).toContain('written later');
    expect(seen).toContain('"q":"Q"');
    // The tool's own _scopes give way to what the call names.
    expect(seen).not.toContain('OTHER');
  });
});
