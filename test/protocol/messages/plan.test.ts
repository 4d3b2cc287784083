/** Unit tests of src/protocol/messages/plan.ts: the shorthand and the rendering of plans (their load checks: load-request.test.ts). */
import { describe, expect, it } from 'vitest';
import { builtins, freshState, normalize, render } from '../../helpers/builtin-messages.js';

describe('plan: the shorthand (MSG-7)', () => {
  it('defaults mode to eager and calls to []', () => {
    expect(normalize({ type: 'plan' })).toEqual({ type: 'plan', mode: 'eager', calls: [] });
  });

  it('keeps a written mode and calls', () => {
    const calls = [{ _tool: 'a' }];
    expect(normalize({ type: 'plan', mode: 'lazy', calls })).toEqual({ type: 'plan', mode: 'lazy', calls });
  });
});

describe('plan: rendering (MSG-15)', () => {
  const calls = [{ _tool: 'greet', name: '†input.name', _outputPath: '†state.greeting' }];

  it('renders an eager plan as the strategy so far, each call with its progress (PLAN-11)', () => {
    const state = render({ type: 'plan', mode: 'eager', calls });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.role).toBe('user');
    expect(state.messages[0]?.content).toMatch(/strategy so far/);
    expect(state.messages[0]?.content.endsWith(`\npending: ${JSON.stringify(calls[0])}`)).toBe(true);
    expect(state.instructions).toEqual([]);
  });

  it('says once what three or more consecutive calls of one status share: their tool and where their results go (PLAN-15)', () => {
    const task = (n: number, extra: Record<string, unknown> = {}) => ({
      _tool: 'task',
      task: `T${n}`,
      _outputPath: '†state.results',
      _outputMethod: 'push',
      ...extra,
    });
    const planned = [task(0), task(1), task(2), task(3, { _outputMethod: 'set' }), task(4), task(5), task(6)];
    const state = freshState();
    state.callStatus = (call) => (call.task === 'T6' ? undefined : { status: 'done' });
    builtins.get('plan')?.render?.({ type: 'plan', mode: 'eager', calls: planned }, state);
    const content = String(state.messages[0]?.content);
    expect(content).toContain('After "<status>, each {…} plus:", each line is a call holding those fields and its own.');
    expect(content.split('\n').slice(-8)).toEqual([
      'done, each {"_tool":"task","_outputPath":"†state.results","_outputMethod":"push"} plus:',
      '{"task":"T0"}',
      '{"task":"T1"}',
      '{"task":"T2"}',
      // Fewer than three alike: a line each, whole.
      'done: {"_tool":"task","task":"T3","_outputPath":"†state.results","_outputMethod":"set"}',
      'done: {"_tool":"task","task":"T4","_outputPath":"†state.results","_outputMethod":"push"}',
      'done: {"_tool":"task","task":"T5","_outputPath":"†state.results","_outputMethod":"push"}',
      'pending: {"_tool":"task","task":"T6","_outputPath":"†state.results","_outputMethod":"push"}',
    ]);
    // A plan with no group says nothing of groups.
    expect(render({ type: 'plan', mode: 'eager', calls: planned.slice(0, 2) }).messages[0]?.content).not.toContain('plus:');
  });

  it('writes one line a call, its status first, in the order of the plan, with the error of a failed call (PLAN-15)', () => {
    const planned = [{ _tool: 'a', n: 1 }, { _tool: 'b' }, { _tool: 'c', _outputPath: '†state.c' }];
    const state = freshState();
    state.callStatus = (call) =>
      call._tool === 'a' ? { status: 'done' } : call._tool === 'b' ? { status: 'failed', error: { code: 'activity_error', message: 'Down.' } } : undefined;
    builtins.get('plan')?.render?.({ type: 'plan', mode: 'eager', calls: planned }, state);
    const lines = String(state.messages[0]?.content).split('\n').slice(-3);
    expect(lines).toEqual([
      'done: {"_tool":"a","n":1}',
      'failed (error {"code":"activity_error","message":"Down."}): {"_tool":"b"}',
      'pending: {"_tool":"c","_outputPath":"†state.c"}',
    ]);
  });

  it('shows what a call was, without its reasoning or an ephemeral _output, its status found by the whole call (PLAN-16)', () => {
    const thought = { _tool: 'think', topic: 't', _output: 'A THOUGHT', _reasoningForCall: 'because' };
    const kept = { _tool: 'think', topic: 'k', _output: 'NOTE', _outputPath: '†state.note', _reasoningForCall: 'because' };
    const state = freshState();
    const asked: unknown[] = [];
    state.callStatus = (call) => {
      asked.push(call);
      return { status: 'done' };
    };
    builtins.get('plan')?.render?.({ type: 'plan', mode: 'eager', calls: [thought, kept] }, state);
    expect(String(state.messages[0]?.content).split('\n').slice(-2)).toEqual([
      'done: {"_tool":"think","topic":"t"}',
      'done: {"_tool":"think","topic":"k","_output":"NOTE","_outputPath":"†state.note"}',
    ]);
    expect(asked).toEqual([thought, kept]);
  });

  it('says the status of a template call per instance, instances of one status together (PLAN-12, PLAN-15)', () => {
    const state = freshState();
    state.instances = ['fr', 'de', 'it'];
    state.callStatus = (call) => (call._instance === 'de' ? undefined : { status: 'done' });
    builtins.get('plan')?.render?.({ type: 'plan', mode: 'eager', calls: [{ _tool: 'translate' }] }, state);
    expect(String(state.messages[0]?.content).split('\n').at(-1)).toBe('done on fr, it; pending on de: {"_tool":"translate"}');
  });

  it('reads the plan from `plan` as the acts write it, and refuses two different lists (PLAN-1)', () => {
    expect(normalize({ type: 'plan', plan: calls })).toEqual({ type: 'plan', mode: 'eager', calls });
    expect(normalize({ type: 'plan', plan: calls, calls })).toEqual({ type: 'plan', mode: 'eager', calls });
    expect(normalize({ type: 'plan', plan: calls, calls: [] })).toMatchObject({ calls: [], plan: calls });
  });

  it('renders nothing for an eager plan without calls', () => {
    expect(render({ type: 'plan', mode: 'eager', calls: [] })).toEqual(freshState());
  });

  it('adds an instruction to answer with calls only for a lazy plan, and lists its draft calls', () => {
    const state = render({ type: 'plan', mode: 'lazy', calls });
    expect(state.instructions).toHaveLength(1);
    expect(state.instructions[0]).toMatch(/calls/);
    expect(state.instructions[0]).toMatch(/not be executed/);
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.content).toContain(JSON.stringify(calls));
    expect(state.messages[0]?.content).not.toMatch(/strategy so far/);
  });

  it('adds the instruction but no draft block for a lazy plan without calls', () => {
    const state = render({ type: 'plan', mode: 'lazy', calls: [] });
    expect(state.instructions).toHaveLength(1);
    expect(state.messages).toEqual([]);
  });
});
