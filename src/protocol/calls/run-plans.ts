/**
 * Plans in a run (spec/plans.md): a fresh plan that is the document's last word runs before the
 * model is asked (PLAN-2), once per instance when it is a template (PLAN-12); each step's calls become the plan
 * for the next step, kept with its progress (PLAN-11); a lazy planner's answer is checked (PLAN-7,
 * PLAN-13).
 */
import type { BatchEntry } from './call-batch.js';
import type { CallLedger } from './call-ledger.js';
import type { PlanStatusEntry } from '../types.js';
import { throwIfCancelled } from '../cancellation.js';
import type { CallScope } from './call-scope.js';
import { addWriter, describeCycle, findCycle, forInstance, readsOf } from '../variables/plan-graph.js';
import { ScopedReferenceIndex } from '../variables/reference-index.js';
import { parseExpression, findReferences, type Reference } from '../variables/references.js';
import { flushErrors, runBatch } from './run-batch.js';
import { isTemplate } from '../messages/plan.js';
import type { Call, ErrorMessage, Message, PlanMessage } from '../types.js';

/** The plan messages of the context, and whether any makes the run a lazy planner (PLAN-7). */
export function plansOf(scope: CallScope): { plans: PlanMessage[]; lazy: boolean } {
  const plans = scope.store.messages.filter((message): message is PlanMessage => message.type === 'plan');
  return { plans, lazy: plans.some((plan) => plan.mode === 'lazy') };
}

/**
 * The eager plans of a document's context that are its last word (PLAN-2, act 012 "Adjusting a
 * Plan"): no newer instruction — a user turn or an input with values — follows them. Only these
 * run before the model; a plan the user has spoken after is the strategy so far, left to the model.
 */
export function lastWordPlans(messages: readonly Message[]): PlanMessage[] {
  const plans: PlanMessage[] = [];
  let spokenAfter = false;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    if (isInstruction(message)) spokenAfter = true;
    else if (message.type === 'plan' && !spokenAfter) plans.push(message as PlanMessage);
  }
  return plans.reverse();
}

/** A message that instructs the model anew (PLAN-2): a user turn, or an input that gives values. */
function isInstruction(message: Message): boolean {
  if (message.type === 'user') return true;
  if (message.type === 'text') return ((message as { role?: string }).role ?? 'user') === 'user';
  return message.type === 'input' && (message as { input?: unknown }).input !== undefined;
}

/**
 * The instances a plan's call runs on (PLAN-12): the call's own, else the plan's `_instance`, else
 * every instance of the context when the plan is a template, else none (the call is global).
 */
function targetsOf(plan: PlanMessage, call: Call, instances: readonly string[]): (string | undefined)[] {
  if (call._instance !== undefined) return [undefined];
  if (plan._instance !== undefined) return [plan._instance];
  return isTemplate(plan, instances) ? [...instances] : [undefined];
}

/** The calls a plan runs, as batch entries: each call once per target instance (PLAN-12). */
function planEntries(plan: PlanMessage, planIndex: number, instances: readonly string[]): BatchEntry[] {
  return plan.calls.flatMap((call, index) => {
    const base = typeof call._id === 'string' ? call._id : `plan${planIndex}.${index}`;
    const targets = targetsOf(plan, call, instances);
    return targets.map((instance) => ({ id: targets.length > 1 && instance !== undefined ? `${base}@${instance}` : base, call: forInstance(call, instance) }));
  });
}

/** True when none of the plan's calls is done or failed yet: only then does it run before the model (PLAN-2). */
function isFresh(plan: PlanMessage, ledger: CallLedger, instances: readonly string[]): boolean {
  return plan.calls.every((call) => targetsOf(plan, call, instances).every((instance) => ledger.status(forInstance(call, instance)) === undefined));
}

/** The plan with `_status` saying what became of each of its calls (PLAN-11). */
export function withProgress(plan: PlanMessage, ledger: CallLedger, instances: readonly string[]): PlanMessage {
  const statusOf = (call: Call) => ledger.status(call)?.status ?? 'pending';
  const _status = plan.calls.map((call): PlanStatusEntry => {
    const targets = targetsOf(plan, call, instances);
    if (targets.length === 1) return statusOf(forInstance(call, targets[0]));
    return Object.fromEntries(targets.map((instance) => [instance as string, statusOf(forInstance(call, instance))]));
  });
  return { ...plan, _status };
}

/**
 * Runs each fresh eager plan of the context, in context order, one batch each; their errors go to
 * the context, and each plan is updated with its progress. A plan some of whose calls are done or
 * failed is the strategy so far: the model sees it and decides (PLAN-2, PLAN-10).
 */
export async function runEagerPlans(scope: CallScope, plans: readonly PlanMessage[]): Promise<void> {
  const instances = scope.store.instances();
  for (const [planIndex, plan] of plans.entries()) {
    if (plan.mode !== 'eager' || plan.calls.length === 0 || !isFresh(plan, scope.ledger, instances)) continue;
    throwIfCancelled(scope.signal);
    try {
      await runBatch(scope, planEntries(plan, planIndex, instances));
    } finally {
      scope.store.replace(plan, withProgress(plan, scope.ledger, instances));
    }
    flushErrors(scope);
  }
}

/**
 * Makes a step's calls the plan for the next step (PLAN-11): the eager plans of the context are
 * replaced by one plan holding them, with what became of each.
 */
export function adoptPlan(scope: CallScope, calls: readonly Call[]): void {
  if (calls.length === 0) return;
  scope.store.remove((message) => message.type === 'plan' && (message as PlanMessage).mode === 'eager');
  scope.store.append(withProgress({ type: 'plan', mode: 'eager', calls: [...calls] }, scope.ledger, scope.store.instances()));
}

/**
 * Why a plan could not run, as error messages (PLAN-4, PLAN-13): a dependency cycle, a tool the
 * context does not define, or a reference that nothing in the context or the plan provides.
 */
export function planProblems(scope: CallScope, calls: Call[]): ErrorMessage[] {
  const problems: ErrorMessage[] = [];
  const cycle = findCycle(calls);
  if (cycle) problems.push(planError('unresolved_reference', `The plan cannot run: ${describeCycle(calls, cycle)}.`));
  const tools = scope.tools();
  // The plan's writes, indexed once by path and instance, so the check stays linear (PLAN-9).
  const writers = new ScopedReferenceIndex<Call>();
  for (const call of calls) addWriter(writers, call, call);
  for (const [index, call] of calls.entries()) {
    if (!tools.has(call._tool)) problems.push(planError('unknown_tool', `Call #${index} names the tool "${call._tool}", which is not defined.`, call));
    const missing = unprovided(scope, writers, call);
    if (missing.length > 0) {
      const names = missing.map((reference) => reference.text).join(', ');
      problems.push(
        planError('unresolved_reference', `Call #${index} (${call._tool}) reads ${names}, which neither the context nor any call of the plan provides.`, call),
      );
    }
  }
  return problems;
}

function planError(code: string, message: string, call: Call = { _tool: '(plan)' }): ErrorMessage {
  return { type: 'error', call, error: { code, message } };
}

/**
 * The references a planned call reads that nothing provides: not in the context (for its
 * instance) and written by no call of the plan. Of alternatives (`†a || †b`) one is enough.
 */
function unprovided(scope: CallScope, writers: ScopedReferenceIndex<Call>, call: Call): Reference[] {
  // A plan may be written before its input is given (act 008): `†input` is then its parameter.
  const inputGiven = scope.store.count('input') > 0;
  const written = (reference: Reference) => {
    let found = false;
    const visit = (writer: Call) => {
      if (writer !== call) found = true;
    };
    // Global writes reach every instance; an instance's own only that instance (VAR-17).
    writers.forEachIn(reference, undefined, visit);
    if (!found && call._instance !== undefined) writers.forEachIn(reference, call._instance, visit);
    return found;
  };
  const provided = (reference: Reference) =>
    (reference.kind === 'input' && !inputGiven) || scope.store.read(reference, call._instance).found || written(reference);
  const missing: Reference[] = [];
  const visit = (value: unknown) => {
    if (typeof value === 'string') {
      const expression = parseExpression(value);
      const references = expression ? expression.refs : findReferences(value);
      if (expression?.op === 'or') {
        if (!references.some(provided)) missing.push(...references);
      } else missing.push(...references.filter((reference) => !provided(reference)));
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(visit);
  };
  if (readsOf(call).length > 0) {
    const { _outputPath: _path, ...parameters } = call;
    visit(parameters);
  }
  return missing;
}
