/** Unit tests of src/protocol/messages/plan.ts: the shorthand and the rendering of plans (their load checks: load-request.test.ts). */
import { describe, expect, it } from 'vitest';
import { freshState, normalize, render } from '../../helpers/builtin-messages.js';

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

  it('renders an eager plan with calls as a block of its calls marked as already executed', () => {
    const state = render({ type: 'plan', mode: 'eager', calls });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.role).toBe('user');
    expect(state.messages[0]?.content).toMatch(/already executed/);
    expect(state.messages[0]?.content).toContain(JSON.stringify(calls, null, 2));
    expect(state.instructions).toEqual([]);
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
    expect(state.messages[0]?.content).toContain(JSON.stringify(calls, null, 2));
    expect(state.messages[0]?.content).not.toMatch(/already executed/);
  });

  it('adds the instruction but no draft block for a lazy plan without calls', () => {
    const state = render({ type: 'plan', mode: 'lazy', calls: [] });
    expect(state.instructions).toHaveLength(1);
    expect(state.messages).toEqual([]);
  });
});
