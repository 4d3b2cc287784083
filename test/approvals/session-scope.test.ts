/** Session approvals through real runs (spec/calls.md CALL-11): one given for a worker's call holds within that worker, never in its caller. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { folderWith } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const send = { type: 'tool', tool: { send: { type: 'object', properties: { to: { type: 'string' } }, _approval: 'required' } } };

const files = {
  'planner.json': {
    meta: { name: 'planner' },
    context: [send, { type: 'tool', tool: { askWorker: { type: 'object', properties: { input: { type: 'string' } }, _delegate: './worker.json' } } }],
    schema: { type: 'string' },
  },
  'worker.json': { meta: { name: 'worker' }, context: [send], schema: { type: 'string' } },
};

/** Step by step: the planner starts the worker, the worker sends twice, then the planner sends the identical call. */
const answers = [
  (request: ModelRequest) =>
    request.requestName === 'planner'
      ? { calls: [{ _tool: 'askWorker', input: 'go' }], output: null }
      : { calls: [{ _tool: 'send', to: 'a@example.com' }], output: null },
  (request: ModelRequest) =>
    request.requestName === 'planner'
      ? { calls: [{ _tool: 'send', to: 'a@example.com' }], output: null }
      : { calls: [{ _tool: 'send', to: 'a@example.com' }], output: null },
  () => ({ calls: [], output: 'done' }),
];

describe('session approvals are scoped to the run that gave them (CALL-11)', () => {
  it("asks the planner about a call its worker's prompt approved for the session, and not the worker again", async () => {
    const root = folderWith(files);
    const runtime = createRuntime({ root });
    const asked: string[] = [];
    const confirm = createApprovalHook({
      mode: 'interactive',
      prompt: async (request) => {
        asked.push(request.run.name);
        return { decision: 'approved_session' };
      },
    });
    const result = await runtime.run(await runtime.load(join(root, 'planner.json')), { model: stepModel(...answers), confirm });
    expect(result.ok).toBe(true);
    // The worker was asked once for its two identical calls; the planner was asked for its own.
    expect(asked).toEqual(['worker', 'planner']);
  });
});
