/** The `plan` message (MSG-7, MSG-15, spec/plans.md): the strategy so far, a graph of calls shown with each call's progress; `lazy` asks the model for one. */
import type { CallStatus } from './handlers.js';
import type { PlanMessage } from '../types.js';
import { defineHandler, type RenderState } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { pointer } from '../json.js';
import { describeCycle, findCycle, forInstance } from '../variables/plan-graph.js';
import { validateExpression } from '../variables/references.js';
import type { Call, BaseMessage } from '../types.js';
import { messageSchema } from './message-schema.js';
import { jsonLine, pushUser } from './render-blocks.js';

/** The handler of `plan`. */
export const planHandler = defineHandler<PlanMessage>({
  type: 'plan',
  schema: messageSchema('plan'),
  // Acts write the calls as `plan` (PLAN-1); both names at once must agree.
  normalize: (message) => {
    const { plan, ...rest } = message as BaseMessage & { plan?: unknown };
    const conflict = plan !== undefined && rest.calls !== undefined && JSON.stringify(plan) !== JSON.stringify(rest.calls);
    // Two different lists are kept, for check() to name.
    return { ...rest, mode: rest.mode ?? 'eager', calls: rest.calls ?? plan ?? [], ...(conflict ? { plan } : {}) };
  },
  check(message) {
    if ('plan' in message)
      return [{ pointer: '/plan', message: 'Expected the calls under either "plan" or "calls" (or the same list under both), but the two lists differ.' }];
    const problems = message.calls.flatMap((call, index) => expressionProblems(call, `/calls/${index}`));
    const cycle = findCycle(message.calls);
    if (cycle) problems.push({ pointer: '/calls', message: `Expected the plan's calls to form no cycle, but ${describeCycle(message.calls, cycle)}.` });
    if (message._status !== undefined && message._status.length !== message.calls.length)
      problems.push({ pointer: '/_status', message: `Expected one status per call (${message.calls.length}), got ${message._status.length}.` });
    return problems;
  },
  render(message, state) {
    if (message.mode === 'lazy') {
      state.instructions.push(
        'Plan only: answer with the calls that would complete the task, using †references between them for values that earlier calls produce. The calls will not be executed now; they are returned as a plan for review. Keep alternative output paths (†a || †b) where the outcome is not known yet.',
      );
      if (message.calls.length > 0) pushUser(state, `## Draft plan\n${jsonLine(message.calls)}`);
    } else if (message.calls.length > 0) {
      const { lines, grouped } = progressLines(message, state);
      pushUser(
        state,
        `## Plan (the strategy so far)\nThe calls you answer with become the plan. One call a line, after its status: a done call has its result in the context and is not run again; repeat a pending or failed call to run it.${grouped ? GROUP_NOTE : ''}\n${lines.join('\n')}`,
      );
    }
  },
});

/**
 * A plan is a template over the instances (PLAN-12) when the context has instances and neither the
 * plan nor any of its calls names one: a plan that targets instances itself keeps its other calls global.
 */
export function isTemplate(plan: PlanMessage, instances: readonly string[]): boolean {
  return instances.length > 0 && plan._instance === undefined && plan.calls.every((call) => call._instance === undefined);
}

/** Fields a run of plan lines may share under one line (PLAN-15): the tool and where its result goes. */
const SHARED_FIELDS = ['_tool', '_outputPath', '_outputMethod'] as const;
/** How many consecutive calls of one status and the same shared fields are written as a group (PLAN-15). */
const MIN_GROUP = 3;
/** What the plan's heading adds when it has a group (PLAN-15). */
const GROUP_NOTE = ' After "<status>, each {…} plus:", each line is a call holding those fields and its own.';

/**
 * The plan's calls, one line each, after what became of it (PLAN-11, PLAN-15): `done: {call}`; per
 * instance for a template over instances (PLAN-12), `done on a, b; pending on c: {call}`. Outside a
 * template, `MIN_GROUP` or more consecutive calls of one status that share their tool, `_outputPath`
 * and `_outputMethod` say those once: `done, each {"_tool":…} plus:`, then each call's own fields.
 */
function progressLines(message: PlanMessage, state: RenderState): { lines: string[]; grouped: boolean } {
  const targets = state.instances && isTemplate(message, state.instances) ? state.instances : undefined;
  if (!targets)
    return groupedLines(message.calls.map((call) => ({ status: shown(state.callStatus?.(forInstance(call, message._instance))), call: asShown(call) })));
  const lines = message.calls.map((call) => {
    const line = JSON.stringify(asShown(call));
    if (call._instance !== undefined) return `${shown(state.callStatus?.(forInstance(call, message._instance)))}: ${line}`;
    const byStatus = new Map<string, string[]>();
    for (const instance of targets) {
      const status = shown(state.callStatus?.(forInstance(call, instance)));
      const instances = byStatus.get(status);
      if (instances) instances.push(instance);
      else byStatus.set(status, [instance]);
    }
    const statuses = [...byStatus].map(([status, instances]) => `${status} on ${instances.join(', ')}`);
    return `${statuses.join('; ')}: ${line}`;
  });
  return { lines, grouped: false };
}

/** Plan lines of calls with their status, runs of `MIN_GROUP` or more that share their status and `SHARED_FIELDS` written as a group (PLAN-15). */
function groupedLines(entries: readonly { status: string; call: Call }[]): { lines: string[]; grouped: boolean } {
  const lines: string[] = [];
  let grouped = false;
  for (let start = 0; start < entries.length; ) {
    const first = entries[start] as { status: string; call: Call };
    const shared = JSON.stringify(sharedOf(first.call));
    let end = start + 1;
    while (end < entries.length && entries[end]?.status === first.status && JSON.stringify(sharedOf((entries[end] as { call: Call }).call)) === shared) end++;
    if (end - start < MIN_GROUP) {
      for (const { status, call } of entries.slice(start, end)) lines.push(`${status}: ${JSON.stringify(call)}`);
    } else {
      grouped = true;
      lines.push(`${first.status}, each ${shared} plus:`);
      for (const { call } of entries.slice(start, end)) lines.push(JSON.stringify(ownFields(call)));
    }
    start = end;
  }
  return { lines, grouped };
}

/** The fields of a call that a group of plan lines may share, in `SHARED_FIELDS` order. */
function sharedOf(call: Call): Record<string, unknown> {
  return Object.fromEntries(SHARED_FIELDS.filter((field) => field in call).map((field) => [field, call[field]]));
}

/** A call without the fields its group's line says. */
function ownFields(call: Call): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call).filter(([field]) => !(SHARED_FIELDS as readonly string[]).includes(field)));
}

/**
 * A call as its plan line shows it (PLAN-16): what it was, without `_reasoningForCall` (the model's
 * commentary) and, when it has no `_outputPath`, without `_output` (an ephemeral result, never kept).
 */
function asShown(call: Call): Call {
  const { _reasoningForCall: _reasoning, ...rest } = call;
  if (rest._outputPath !== undefined || !('_output' in rest)) return rest;
  const { _output: _ephemeral, ...kept } = rest;
  return kept;
}

/** What became of a call, as its line says it: `done`, `pending`, or `failed` with its error as compact JSON. */
function shown(status: CallStatus | undefined): string {
  if (!status) return 'pending';
  if (status.status !== 'failed') return 'done';
  return status.error ? `failed (error ${JSON.stringify({ code: status.error.code, message: status.error.message })})` : 'failed';
}

/** The malformed expressions of a planned call: in its parameters (inputs) and its `_outputPath`. */
function expressionProblems(call: Call, at: string): MessageProblem[] {
  const problems: MessageProblem[] = [];
  const visit = (value: unknown, where: string, kind: 'input' | 'output') => {
    if (typeof value === 'string') {
      const problem = validateExpression(value, kind);
      if (problem) problems.push({ pointer: where, message: problem });
    } else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, `${where}/${index}`, kind);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) visit(item, `${where}${pointer(key)}`, kind);
    }
  };
  for (const [key, value] of Object.entries(call)) {
    if (key === '_outputPath') visit(value, `${at}/_outputPath`, 'output');
    else visit(value, `${at}${pointer(key)}`, 'input');
  }
  return problems;
}
