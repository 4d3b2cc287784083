/** Asking the run's confirm hook about a call (TRACE-8): the question and the answer, both traced. */
import { abortable, handedOutSignal } from '../cancellation.js';
import { cancelled } from '../errors.js';
import type { CallScope } from './call-scope.js';
import type { ConfirmDecision } from '../contracts.js';
import type { Call, ToolSchema } from '../types.js';

/**
 * Asks the run's confirm hook about a call, tracing the question and the answer (TRACE-8);
 * undefined when there is no hook or it does not apply to the call.
 */
export async function askConfirm(scope: CallScope, callId: string, call: Call, tool: ToolSchema): Promise<ConfirmDecision | undefined> {
  const hook = scope.options.confirm;
  if (!hook) return undefined;
  const request = { call, callId, tool, toolName: call._tool, run: scope.run, signal: handedOutSignal(scope.signal) };
  if (hook.appliesTo && !hook.appliesTo(request)) return undefined;
  scope.trace.emit('approval.requested', { call: callId, tool: call._tool, params: paramsOf(call) });
  // A cancelled run does not wait for an answer that may never come.
  const decision = await abortable(Promise.resolve(hook(request)), scope.signal, cancelled);
  const reason = 'reason' in decision ? (decision.reason ?? null) : null;
  scope.trace.emit('approval.decided', {
    call: callId,
    tool: call._tool,
    decision: decision.decision,
    reason,
    ...(decision.by === undefined ? {} : { by: decision.by }),
  });
  return decision;
}

/** A call's parameters: the call without its `_tool`, as the trace shows them. */
export function paramsOf(call: Call): Record<string, unknown> {
  const { _tool: _name, ...params } = call;
  return params;
}
