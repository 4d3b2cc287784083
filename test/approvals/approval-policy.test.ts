import { describe, expect, it } from 'vitest';
import { createApprovalHook, requiresApproval } from '../../src/approvals/approval-policy.js';
import { normalizeTool } from '../../src/protocol/normalize.js';
import type { ConfirmDecision, ConfirmRequest, RunInfo } from '../../src/protocol/runtime.js';

const guarded = normalizeTool({ properties: { to: { type: 'string' } }, _approval: 'required' });
const free = normalizeTool({ properties: { to: { type: 'string' } } });

function run(id: string, depth = 0): RunInfo {
  return { id, name: id, location: `${id}.json`, depth, parent: depth === 0 ? null : 'top', trusted: true, model: undefined };
}

function request(runInfo: RunInfo, to = 'a@example.com'): ConfirmRequest {
  return { call: { _tool: 'send', to }, callId: '0.0', tool: guarded, toolName: 'send', run: runInfo, signal: new AbortController().signal };
}

describe('approval policy', () => {
  it('asks only about tools that declare _approval "required"', () => {
    const hook = createApprovalHook({ mode: 'approve_all' });
    expect(requiresApproval(guarded)).toBe(true);
    expect(hook.appliesTo?.({ ...request(run('top')), tool: free })).toBe(false);
    expect(hook.appliesTo?.(request(run('top')))).toBe(true);
  });

  it('approves everything in approve_all and refuses everything, with a reason, in strict', async () => {
    expect(await createApprovalHook({ mode: 'approve_all' })(request(run('top')))).toEqual({ decision: 'approved' });
    const strict = await createApprovalHook({ mode: 'strict' })(request(run('top')));
    expect(strict).toMatchObject({ decision: 'rejected', reason: expect.stringContaining('strict') });
  });

  it('does not ask again about an identical call approved for the session', async () => {
    const asked: string[] = [];
    const answers: ConfirmDecision[] = [{ decision: 'approved_session' }, { decision: 'rejected', reason: 'no' }];
    const hook = createApprovalHook({
      mode: 'interactive',
      prompt: async (r) => {
        asked.push(String(r.call.to));
        return answers.shift() as ConfirmDecision;
      },
    });
    const top = run('top');
    expect(await hook(request(top))).toEqual({ decision: 'approved_session' });
    expect(await hook(request(top))).toEqual({ decision: 'approved_session' });
    expect(await hook(request(top, 'b@example.com'))).toEqual({ decision: 'rejected', reason: 'no' });
    expect(asked).toEqual(['a@example.com', 'b@example.com']);
  });

  it('keeps an approval answered inside a delegate to that child run', async () => {
    let prompts = 0;
    const hook = createApprovalHook({
      mode: 'interactive',
      prompt: async () => {
        prompts++;
        return { decision: 'approved_session' };
      },
    });
    const top = run('top');
    await hook(request(top, 'x@example.com')); // the session starts with the top run
    await hook(request(run('child', 1), 'c@example.com'));
    await hook(request(run('child', 1), 'c@example.com'));
    expect(prompts).toBe(2);
    await hook(request(top, 'c@example.com'));
    expect(prompts).toBe(3);
    // ...while the session's own approvals hold inside every child.
    await hook(request(run('other-child', 1), 'x@example.com'));
    expect(prompts).toBe(3);
  });

  it('asks one question at a time when calls wait for approval in parallel', async () => {
    let open = 0;
    let most = 0;
    const hook = createApprovalHook({
      mode: 'interactive',
      prompt: async () => {
        open++;
        most = Math.max(most, open);
        await new Promise((resolve) => setTimeout(resolve, 10));
        open--;
        return { decision: 'approved' };
      },
    });
    await Promise.all(['a', 'b', 'c'].map((to) => hook(request(run('top'), to))));
    expect(most).toBe(1);
  });
});
