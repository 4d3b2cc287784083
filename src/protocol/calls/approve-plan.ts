/** Approving a lazy planner's plan before it runs (PLAN-14): the run's confirm hook sees the whole plan as one call. */
import { askConfirm } from './confirm-call.js';
import type { CallScope } from './call-scope.js';
import type { Call, ToolSchema } from '../types.js';

/** The name the plan goes by in approvals and the trace. */
export const PLAN_APPROVAL_TOOL = '(plan)';

/** The plan as a tool, so that approval policies that ask about marked tools ask about it. */
const PLAN_TOOL: ToolSchema = {
  type: 'object',
  description: 'Run this plan: its calls, in dependency order.',
  properties: { calls: { type: 'array', items: { type: 'object' } }, _approval: { const: 'required' } },
  required: ['calls'],
};

/**
 * Asks the confirm hook to approve the plan: its calls when approved (or when nothing asks), the
 * edited calls when edited, undefined when rejected.
 */
export async function approvePlan(scope: CallScope, calls: Call[]): Promise<Call[] | undefined> {
  const decision = await askConfirm(scope, 'plan', { _tool: PLAN_APPROVAL_TOOL, calls }, PLAN_TOOL);
  if (decision?.decision === 'rejected') return undefined;
  if (decision?.decision === 'edited' && Array.isArray(decision.call.calls)) return decision.call.calls as Call[];
  return calls;
}
