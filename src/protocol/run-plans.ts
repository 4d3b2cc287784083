/** Plans in a run: the document's eager plans run before the model is asked (LOOP-2, PLAN-2), and a lazy planner's answer is checked (PLAN-7). */
import { throwIfCancelled } from './cancellation.js';
import type { CallScope } from './execute-call.js';
import { describeCycle, findCycle } from './plan-graph.js';
import { flushErrors, runBatch } from './run-batch.js';
import type { Call, ErrorMessage, PlanMessage } from './types.js';

/** The plan messages of the context, and whether any makes the run a lazy planner (PLAN-7). */
export function plansOf(scope: CallScope): { plans: PlanMessage[]; lazy: boolean } {
  const plans = scope.store.messages.filter((message): message is PlanMessage => message.type === 'plan');
  return { plans, lazy: plans.some((plan) => plan.mode === 'lazy') };
}

/** Runs each eager plan with calls, in context order, one batch each; their errors go to the context. */
export async function runEagerPlans(scope: CallScope, plans: readonly PlanMessage[]): Promise<void> {
  for (const [planIndex, plan] of plans.entries()) {
    if (plan.mode !== 'eager' || plan.calls.length === 0) continue;
    throwIfCancelled(scope.signal);
    await runBatch(
      scope,
      plan.calls.map((call, index) => ({ id: typeof call._id === 'string' ? call._id : `plan${planIndex}.${index}`, call })),
    );
    flushErrors(scope);
  }
}

/**
 * Why a plan the model returned could not run, as error messages. Unknown tools and malformed
 * calls never get this far (the Solution schema refuses them); what is left is a dependency cycle.
 */
export function planProblems(calls: Call[]): ErrorMessage[] {
  const cycle = findCycle(calls);
  if (!cycle) return [];
  return [
    { type: 'error', call: { _tool: '(plan)' }, error: { code: 'unresolved_reference', message: `The plan cannot run: ${describeCycle(calls, cycle)}.` } },
  ];
}
