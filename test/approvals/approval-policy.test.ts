import { describe, expect, it } from 'vitest';
import { approvalKey, createApprovalHook, requiresApproval } from '../../src/approvals/approval-policy.js';
import { normalizeTool } from '../../src/protocol/tools/normalize-tool.js';
import type { ConfirmDecision, ConfirmRequest, RunInfo } from '../../src/protocol/contracts.js';

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
    expect(await createApprovalHook({ mode: 'approve_all' })(request(run('top')))).toEqual({ decision: 'approved', by: 'policy:approve_all' });
    const strict = await createApprovalHook({ mode: 'strict' })(request(run('top')));
    expect(strict).toMatchObject({ decision: 'rejected', reason: expect.stringContaining('strict'), by: 'policy:strict' });
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
    expect(await hook(request(top))).toEqual({ decision: 'approved_session', by: 'person' });
    expect(await hook(request(top))).toEqual({ decision: 'approved_session', by: 'session' });
    expect(await hook(request(top, 'b@example.com'))).toEqual({ decision: 'rejected', reason: 'no', by: 'person' });
    expect(asked).toEqual(['a@example.com', 'b@example.com']);
  });

  it('holds a session approval in the run that gave it and the runs it starts, never in its caller or siblings (CALL-11)', async () => {
    let prompts = 0;
    const hook = createApprovalHook({
      mode: 'interactive',
      prompt: async () => {
        prompts++;
        return { decision: 'approved_session' };
      },
    });
    const worker = { ...run('worker', 1), lineage: ['top'] };
    const grandchild = { ...run('grandchild', 2), parent: 'worker', lineage: ['top', 'worker'] };
    const sibling = { ...run('sibling', 1), lineage: ['top'] };
    // Approved for a worker's call: it holds in that worker and what it starts...
    expect(await hook(request(worker, 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'person' });
    expect(await hook(request(worker, 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'session' });
    expect(await hook(request(grandchild, 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'session' });
    expect(prompts).toBe(1);
    // ...never above it nor beside it: the planner and a sibling are asked themselves.
    expect(await hook(request(run('top'), 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'person' });
    expect(prompts).toBe(2);
    // Approved at the top, it holds inside every run of the tree.
    expect(await hook(request(sibling, 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'session' });
    expect(await hook(request(grandchild, 'c@example.com'))).toEqual({ decision: 'approved_session', by: 'session' });
    expect(prompts).toBe(2);
  });

  it('knows a run built without a lineage by its parent alone', async () => {
    const hook = createApprovalHook({ mode: 'interactive', prompt: async () => ({ decision: 'approved_session' }) });
    await hook(request(run('top')));
    expect(await hook(request(run('child', 1)))).toEqual({ decision: 'approved_session', by: 'session' });
  });

  it('keeps who decided when the prompt says so itself (TRACE-19)', async () => {
    const hook = createApprovalHook({ mode: 'interactive', prompt: async () => ({ decision: 'approved', by: 'reviewer@example.com' }) });
    expect(await hook(request(run('top')))).toEqual({ decision: 'approved', by: 'reviewer@example.com' });
  });

  it('does not remember a one-off approval: an identical call is asked about again', async () => {
    const asked: string[] = [];
    const hook = createApprovalHook({
      mode: 'interactive',
      prompt: async (r) => {
        asked.push(String(r.call.to));
        return { decision: 'approved' };
      },
    });
    expect(await hook(request(run('top')))).toEqual({ decision: 'approved', by: 'person' });
    expect(await hook(request(run('child', 1)))).toEqual({ decision: 'approved', by: 'person' });
    expect(asked).toEqual(['a@example.com', 'a@example.com']);
  });

  it('keys a call by its canonical parameters: nested key order does not matter, values do', () => {
    const a = { _tool: 'send', to: { name: 'A', address: 'a@example.com' }, _reasoningForCall: 'one' };
    const b = { _reasoningForCall: 'two', to: { address: 'a@example.com', name: 'A' }, _tool: 'send' };
    expect(approvalKey(a)).toBe(approvalKey(b));
    expect(approvalKey({ ...a, to: { name: 'B', address: 'a@example.com' } })).not.toBe(approvalKey(a));
    expect(approvalKey({ ...a, _tool: 'post' })).not.toBe(approvalKey(a));
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
