/** The error hierarchy: one base class, subclasses by who is at fault, each with a stable code. */
import { notJsonPlaceholder, toJsonData } from './json-data.js';

/** The stable error codes (spec/errors.md, Codes). */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_params'
  | 'unresolved_reference'
  | 'unknown_tool'
  | 'activity_error'
  | 'delegate_not_found'
  | 'delegate_forbidden'
  | 'max_depth_exceeded'
  | 'max_steps_exceeded'
  | 'budget_exceeded'
  | 'invalid_model_output'
  | 'output_schema_validation_failed'
  | 'model_error'
  | 'rejected_by_user'
  | 'cancelled_by_user'
  | 'worker_error'
  | 'max_tokens_exceeded'
  | 'insufficient_context'
  | 'no_model_available_for_tier'
  | 'invalid_input'
  | 'usage_error';

/** One problem found in a document: where (file + JSON pointer) and what was expected. */
export interface Problem {
  /** The file path or URL of the document. */
  document: string;
  /** JSON pointer into the document ('' for the whole document). */
  pointer: string;
  /** A full sentence saying what was expected. */
  message: string;
  /** For unparseable JSON: 1-based line and column. */
  line?: number;
  column?: number;
}

/** Something wrong with one message that its schema cannot say, at a JSON pointer inside the message. */
export interface MessageProblem {
  /** JSON pointer relative to the message ('' for the message itself). */
  pointer: string;
  /** A full sentence saying what was expected. */
  message: string;
}

/** Formats a problem as `file#/pointer: message` (or `file:line:column: message`). */
export function formatProblem(problem: Problem): string {
  if (problem.line !== undefined) return `${problem.document}:${problem.line}:${problem.column ?? 1}: ${problem.message}`;
  return `${problem.document}#${problem.pointer}: ${problem.message}`;
}

/** An error as data: its code and message, and the fields that name what went wrong. */
export interface ErrorJson {
  code: ErrorCode;
  message: string;
  [field: string]: unknown;
}

/** The base of every error the runtime raises on purpose. */
export class ProtocolError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }
  /**
   * The error as data (ERR-1): `code` and `message`, and every field of `data` beside them (the
   * problems and their pointers, `toolName`, `issues`, `available`, …), as JSON. Traces, error
   * messages, `--json` results and the server's 422 all carry this one shape.
   */
  toJSON(): ErrorJson {
    const fields = toJsonData(this.data, { replace: notJsonPlaceholder }) as Record<string, unknown>;
    return { ...fields, code: this.code, message: this.message };
  }
}

/** The Request author is at fault: the document is invalid. Carries every problem found. */
export class RequestError extends ProtocolError {
  readonly problems: Problem[];
  constructor(problems: Problem[], code: ErrorCode = 'invalid_request') {
    super(code, `Invalid Request document:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`, { problems });
    this.problems = problems;
  }
}

/**
 * The input given to a run from outside its run tree does not match the Request's declared input
 * schema (DATA-11): found before anything runs, every problem with its JSON pointer into the input.
 */
export class InputError extends ProtocolError {
  readonly issues: { pointer: string; message: string }[];
  constructor(request: { name: string; location: string }, issues: { pointer: string; message: string }[]) {
    const listed = issues.map((issue) => `  ${issue.pointer || '/'}: ${issue.message}`).join('\n');
    super('invalid_input', `The input given to "${request.name}" (${request.location}) does not match the input schema it declares:\n${listed}`, {
      request: request.name,
      location: request.location,
      issues,
    });
    this.issues = issues;
  }
}

/** A call is malformed: unknown tool, bad parameters, a reference that never resolves. */
export class CallError extends ProtocolError {}

/** The model answered something unusable, or its provider failed. */
export class ModelError extends ProtocolError {}

/** An Activity threw. */
export class ActivityError extends ProtocolError {}

/** A delegate could not be resolved, loaded or run. */
export class DelegateError extends ProtocolError {}

/** A bound was hit: steps, depth, budget, tokens. */
export class BoundError extends ProtocolError {}

/** The user rejected or cancelled. */
export class UserError extends ProtocolError {}

/** Bad usage: a wrong command line, or a run set up wrongly (no model chosen, a missing API key, a bad cassette or models file). */
export class UsageError extends ProtocolError {
  constructor(message: string, data: Record<string, unknown> = {}) {
    super('usage_error', message, data);
  }
}

/** The error a cancelled run ends with (`cause`: what was interrupted, when known). */
export function cancelled(cause?: unknown): UserError {
  return new UserError('cancelled_by_user', 'The run was cancelled.', {}, cause === undefined ? undefined : { cause });
}

/** Wraps anything thrown into a ProtocolError, keeping the original as `cause`. */
export function toProtocolError(error: unknown, fallback: ErrorCode = 'activity_error'): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof Error && error.name === 'AbortError') return cancelled(error);
  const message = error instanceof Error ? error.message : String(error);
  return new ProtocolError(fallback, message, {}, { cause: error });
}
