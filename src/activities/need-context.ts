/** The worker's built-in `need_context` tool (spec/delegate-tool.md DEL-26): asking the planner for what is missing ends the worker's run with `insufficient_context`. */
import { NEED_CONTEXT_ACTIVITY } from '../protocol/tools/delegate-tool.js';
import { DelegateError } from '../protocol/errors.js';
import type { Activity } from '../protocol/contracts.js';
import type { ToolSchema } from '../protocol/types.js';

/** A worker's request for more context: what is missing (references or descriptions) and why it is needed. */
export interface InsufficientContextRequest {
  missing: string[];
  why: string;
}

/** The `need_context` tool every worker is given (DEL-26). */
export const NEED_CONTEXT_TOOL_SCHEMA: ToolSchema = {
  type: 'object',
  description:
    'Call this instead of answering when the task cannot be done with the context you were given: say what is missing and why. Your work then ends, and the planner may ask you again with it.',
  properties: {
    missing: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      minItems: 1,
      description: 'What you need: references such as "†state.changelog", or short descriptions.',
    },
    why: { type: 'string', minLength: 1, description: 'Why the task cannot be done without it.' },
    _activity: { const: NEED_CONTEXT_ACTIVITY },
  },
  required: ['missing', 'why'],
};

/**
 * Ends the worker's run with `insufficient_context` once its step's calls have settled (LOOP-18),
 * carrying the request `{missing, why}` as the error's `request`; the call itself completes with it.
 */
export const needContext: Activity = (call, _tool, _context, environment) => {
  const request: InsufficientContextRequest = { missing: (call.missing as string[]).map(String), why: String(call.why) };
  environment.endRun(
    new DelegateError('insufficient_context', `The worker needs more context: ${request.why} (missing: ${request.missing.join(', ')}).`, { request }),
  );
  return request;
};
