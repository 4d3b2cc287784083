/** Approvals (human in the loop): which calls need one, and the modes that answer — as a confirm hook. */
import { canonicalJson } from '../protocol/json.js';
import type { ConfirmDecision, ConfirmHook, ConfirmRequest } from '../protocol/contracts.js';
import { lineageOf } from '../protocol/calls/child-run.js';
import { metaConst } from '../protocol/tools/tools.js';
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

/**
 * What identifies a call for "approve for this session" (CALL-11): its tool and its canonical
 * parameters (keys sorted at every depth), `_delegate`, `_scopes` and `_instance` included,
 * reasons and other meta-properties aside.
 */
export function approvalKey(call: Call): string {
  const parameters = Object.fromEntries(
    Object.entries(call).filter(([key]) => key !== '_tool' && (!isMetaProperty(key) || key === '_delegate' || key === '_scopes' || key === '_instance')),
  );
  return `${call._tool}\u0000${canonicalJson(parameters)}`;
}

/** A call's parameters, its meta-properties aside: what an approval shows and what an edit replaces. */
export function approvalParameters(call: Call): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call).filter(([key]) => !isMetaProperty(key)));
}

/** The call an approval's edit makes: the new parameters, with the asked call's meta-properties kept. */
export function editedCall(call: Call, parameters: Record<string, unknown>): Call {
  const meta = Object.fromEntries(Object.entries(call).filter(([key]) => isMetaProperty(key)));
  return { ...parameters, ...meta } as Call;
}

/**
 * Who decided, as `approval.decided.by` traces it (TRACE-19): an approval given earlier for the
 * session, the `approve_all` or `strict` mode, or the person asked at the terminal.
 */
export const DECIDED_BY = { session: 'session', approve_all: 'policy:approve_all', strict: 'policy:strict', interactive: 'person' } as const;

/** Options of {@link createApprovalHook}. */
export interface ApprovalPolicyOptions {
  mode: ApprovalMode;
  /** Required for `interactive`. */
  prompt?: ApprovalPrompt;
}

/**
 * The confirm hook of an approval policy. Only calls whose tool requires approval are asked
 * about. A call approved "for the session" is not asked again, whatever the mode, when an
 * identical call (CALL-11) comes in the run that asked or a run it started, at any depth — never
 * in its caller or its siblings; a one-off approval is not remembered. The hook holds the
 * session: create one per run tree (the CLI does, per run). Interactive prompts are asked one at a
 * time.
 */
export function createApprovalHook(options: ApprovalPolicyOptions): ConfirmHook {
  if (options.mode === 'interactive' && !options.prompt) throw new Error('The interactive approval mode needs a prompt.');
  // Each identical call's approvals by the runs they were given in: each holds in that run's subtree.
  const approved = new Map<string, Set<string>>();
  let queue: Promise<unknown> = Promise.resolve();
  const known = (request: ConfirmRequest) => {
    const runs = approved.get(approvalKey(request.call));
    return runs !== undefined && [request.run.id, ...lineageOf(request.run)].some((run) => runs.has(run));
  };
  const remember = (request: ConfirmRequest) => {
    const key = approvalKey(request.call);
    const runs = approved.get(key) ?? new Set<string>();
    approved.set(key, runs.add(request.run.id));
  };

  const hook = (async (request: ConfirmRequest): Promise<ConfirmDecision> => {
    if (known(request)) return { decision: 'approved_session', by: DECIDED_BY.session };
    if (options.mode === 'approve_all') return { decision: 'approved', by: DECIDED_BY.approve_all };
    if (options.mode === 'strict') {
      return {
        decision: 'rejected',
        reason: `"${request.toolName}" needs approval, and approvals are refused in strict mode (use --approve interactive or approve_all).`,
        by: DECIDED_BY.strict,
      };
    }
    const asked = queue.then(async (): Promise<ConfirmDecision> => {
      if (known(request)) return { decision: 'approved_session', by: DECIDED_BY.session };
      const answer = await (options.prompt as ApprovalPrompt)(request);
      return { ...answer, by: answer.by ?? DECIDED_BY.interactive };
    });
    queue = asked.catch(() => undefined);
    const decision = await asked;
    if (decision.decision === 'approved_session') remember(request);
    return decision;
  }) as ConfirmHook;
  hook.appliesTo = (request) => requiresApproval(request.tool);
  return hook;
}
