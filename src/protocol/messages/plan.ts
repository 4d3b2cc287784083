/** The `plan` message (MSG-7, MSG-15, spec/plans.md): a graph of calls run before the model is asked (`eager`), or asked of the model (`lazy`). */
import { defineHandler, type MessageProblem } from '../handlers.js';
import { pointer } from '../json.js';
import { describeCycle, findCycle } from '../plan-graph.js';
import { validateExpression } from '../references.js';
import type { Call, BaseMessage } from '../types.js';
import { messageSchema } from './message-schema.js';
import { jsonBlock, pushUser } from './render-blocks.js';

/** A graph of calls executed before the model is asked (`eager`), or asked of the model (`lazy`). */
export interface PlanMessage extends BaseMessage {
  type: 'plan';
  mode: 'eager' | 'lazy';
  calls: Call[];
}

/** The handler of `plan`. */
export const planHandler = defineHandler<PlanMessage>({
  type: 'plan',
  schema: messageSchema('plan'),
  normalize: (message) => ({ ...message, mode: message.mode ?? 'eager', calls: message.calls ?? [] }),
  check(message) {
    const problems = message.calls.flatMap((call, index) => expressionProblems(call, `/calls/${index}`));
    const cycle = findCycle(message.calls);
    if (cycle) problems.push({ pointer: '/calls', message: `Expected the plan's calls to form no cycle, but ${describeCycle(message.calls, cycle)}.` });
    return problems;
  },
  render(message, state) {
    if (message.mode === 'lazy') {
      state.instructions.push(
        'Plan only: answer with the calls that would complete the task, using †references between them for values that earlier calls produce. The calls will not be executed now; they are returned as a plan for review.',
      );
      if (message.calls.length > 0) pushUser(state, `## Draft plan\n${jsonBlock(message.calls)}`);
    } else if (message.calls.length > 0) {
      pushUser(state, `## Plan (already executed before this step)\n${jsonBlock(message.calls)}`);
    }
  },
});

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
