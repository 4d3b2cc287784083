/** Approvals (human in the loop): which calls need one, and the modes that answer — as a confirm hook. */
import type { ConfirmDecision, ConfirmHook, ConfirmRequest } from '../protocol/runtime.js';
import { metaConst } from '../protocol/tools.js';
import { isMetaProperty, type Call, type ToolSchema } from '../protocol/types.js';

/** How approvals are answered: a person at a terminal, everything approved (tests), or nothing (CI). */
export type ApprovalMode = 'interactive' | 'approve_all' | 'strict';

/** The modes, for usage messages. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ['interactive', 'approve_all', 'strict'];

/** Asks a person about one call. */
export type ApprovalPrompt = (request: ConfirmRequest) => Promise<ConfirmDecision>;

/** True when the tool declares `_approval: "required"` (fixed by the tool's designer). */
export function requiresApproval(tool: ToolSchema): boolean {
  return metaConst(tool, '_approval') === 'required';
}

/** What identifies a call for "approve for this session": its tool and parameters, reasons aside. */
export function approvalKey(call: Call): string {
  const parameters = Object.entries(call)
    .filter(([key]) => !isMetaProperty(key) || key === '_delegate' || key === '_scopes' || key === '_instance')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${call._tool}\u0000${JSON.stringify(parameters)}`;
}

/** Options of {@link createApprovalHook}. */
export interface ApprovalPolicyOptions {
  mode: ApprovalMode;
  /** Required for `interactive`. */
  prompt?: ApprovalPrompt;
}

/**
 * The confirm hook of an approval policy. Only calls whose tool requires approval are asked
 * about. A call approved "for the session" is not asked again when an identical call comes; an
 * answer given inside a delegate holds for that child run only and never becomes a rule of the
 * caller. Interactive prompts are asked one at a time.
 */
export function createApprovalHook(options: ApprovalPolicyOptions): ConfirmHook {
  if (options.mode === 'interactive' && !options.prompt) throw new Error('The interactive approval mode needs a prompt.');
  // Session approvals by run: the top run's are the session's; a child's stay with that child.
  const approved = new Map<string, Set<string>>();
  let topRun: string | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const sessionOf = (request: ConfirmRequest): string => {
    if (request.run.depth > 0) return request.run.id;
    topRun ??= request.run.id;
    return topRun;
  };
  const known = (request: ConfirmRequest) => approved.get(sessionOf(request))?.has(approvalKey(request.call)) ?? false;

  const hook = (async (request: ConfirmRequest): Promise<ConfirmDecision> => {
    if (known(request) || (request.run.depth > 0 && topRun !== undefined && approved.get(topRun)?.has(approvalKey(request.call)))) {
      return { decision: 'approved_session' };
    }
    if (options.mode === 'approve_all') return { decision: 'approved' };
    if (options.mode === 'strict') {
      return {
        decision: 'rejected',
        reason: `"${request.toolName}" needs approval, and approvals are refused in strict mode (use --approve interactive or approve_all).`,
      };
    }
    const asked = queue.then(() => (known(request) ? { decision: 'approved_session' as const } : (options.prompt as ApprovalPrompt)(request)));
    queue = asked.catch(() => undefined);
    const decision = await asked;
    if (decision.decision === 'approved_session') {
      const session = sessionOf(request);
      if (!approved.has(session)) approved.set(session, new Set());
      approved.get(session)?.add(approvalKey(request.call));
    }
    return decision;
  }) as ConfirmHook;
  hook.appliesTo = (request) => requiresApproval(request.tool);
  return hook;
}
