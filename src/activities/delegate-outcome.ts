/** The typed outcome of a `delegate` call (spec/delegate-tool.md DEL-26): what the planner sees, and the failure mode the trace records. */
import type { ProtocolError } from '../protocol/errors.js';
import { formatIssues, validateAgainst } from '../protocol/schemas.js';
import { isJsonObject, type JsonSchema } from '../protocol/types.js';
import type { InsufficientContextRequest } from './need-context.js';

/** The failure modes of a `delegate` call (DEL-26). */
export type FailureMode =
  | 'worker_error'
  | 'max_tokens_exceeded'
  | 'insufficient_context'
  | 'output_schema_validation_failed'
  | 'no_model_available_for_tier'
  | 'cancelled_by_user';

/** The result written at the call's `_outputPath`: never the worker's usage (DEL-26). */
export interface DelegateOutcome {
  success: boolean;
  output: unknown;
  /** `null` on success, else `<failure mode>[: message]`. */
  error: string | null;
}

/** A failed outcome with its failure mode, and the worker's request when it lacked context. */
export interface DelegateFailure {
  outcome: DelegateOutcome;
  failureMode: FailureMode;
  request?: InsufficientContextRequest;
}

/** A successful outcome. */
export function succeeded(output: unknown): DelegateOutcome {
  return { success: true, output, error: null };
}

function failed(failureMode: FailureMode, output: unknown, message?: string): DelegateFailure {
  return { outcome: { success: false, output: output ?? null, error: message === undefined ? failureMode : `${failureMode}: ${message}` }, failureMode };
}

/**
 * The outcome of a worker that failed, or could not start, with `error` (DEL-26):
 * - `cancelled_by_user`: the run tree was cancelled;
 * - `insufficient_context`: the worker called `need_context`; the output is its `{missing, why}`;
 * - `max_tokens_exceeded`: the provider cut the answer; the output is the part that arrived, if any;
 * - `output_schema_validation_failed`: the worker's last answer, after its re-asks (LOOP-8), had an
 *   output that does not match `outputSchema`; the output is that raw output;
 * - `no_model_available_for_tier`: no model of the tier can be used here;
 * - `worker_error`: anything else, with the error's code and message.
 */
export function failureOf(error: ProtocolError, outputSchema: JsonSchema): DelegateFailure {
  switch (error.code) {
    case 'cancelled_by_user':
      return failed('cancelled_by_user', null);
    case 'insufficient_context': {
      const request = error.data.request as InsufficientContextRequest;
      return { ...failed('insufficient_context', request, request.why), request };
    }
    case 'max_tokens_exceeded':
      return failed('max_tokens_exceeded', error.data.partial, error.message);
    case 'no_model_available_for_tier':
      return failed('no_model_available_for_tier', null, error.message);
    case 'invalid_model_output': {
      const answer = error.data.answer;
      if (isJsonObject(answer) && answer.output !== undefined && answer.output !== null) {
        const issues = validateAgainst(outputSchema, answer.output);
        if (issues.length > 0) return failed('output_schema_validation_failed', answer.output, formatIssues(issues));
      }
      return failed('worker_error', null, `${error.code}: ${error.message}`);
    }
    default:
      return failed('worker_error', null, `${error.code}: ${error.message}`);
  }
}
