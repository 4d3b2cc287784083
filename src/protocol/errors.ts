/** The error hierarchy: one base class, subclasses by who is at fault, each with a stable code. */
import { notJsonPlaceholder, toJsonData } from './json-data.js';
import type { SchemaIssue } from './schemas.js';

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

/**
 * The data fields that errors of several codes carry, each with one type wherever it appears:
 * what an open-ended error's data may hold, and what reading any error's data finds.
 */
export type ErrorFields = {
  /** The tool of the failed call. */
  toolName: string;
  /** The names one could have used instead (tools, Activities). */
  available: string[];
  /** Every problem found in a document (ERR-1). */
  problems: Problem[];
  /** Schema validation failures, each at a JSON pointer into the validated value. */
  issues: SchemaIssue[];
  /** The references a call waited for that never resolved (VAR-5). */
  missing: string[];
  /** The ids of the calls of a dependency cycle (PLAN-4). */
  cycle: string[];
  /** A JSON pointer into the value at fault. */
  pointer: string;
};

/** The data of an error whose fields vary with the producer: any fields, those of ErrorFields with their types. */
export type OpenErrorData = Partial<ErrorFields> & { readonly [field: string]: unknown };

/** The data of an error a delegate's run ended with, as the call that delegated fails with its code (DEL-11, ERR-6): the child run and the delegate. */
export type DelegatedErrorData = { child: string; delegate: string };

/**
 * The data each code's errors carry (ERR-1, ERR-9), in the spirit of ajv's `DefinedError`: the fields
 * every producer of the code sets are typed and required; codes whose data varies with the
 * producer are open-ended. A code a delegate's failure passes on to its parent may carry the
 * delegate's data instead (ERR-6, ERR-9).
 */
export type ErrorDataMap = {
  invalid_request: { problems?: Problem[]; job?: string } | DelegatedErrorData;
  invalid_params: OpenErrorData;
  unresolved_reference: { missing: string[] } | { cycle: string[] };
  unknown_tool: { toolName: string; available: string[] };
  activity_error: OpenErrorData;
  delegate_not_found: OpenErrorData;
  delegate_forbidden: OpenErrorData;
  max_depth_exceeded: { maxDepth: number } | DelegatedErrorData;
  max_steps_exceeded: { maxSteps: number } | DelegatedErrorData;
  budget_exceeded:
    | { budget: { tokens?: number; costUsd?: number }; spent: { tokens: number } | { costUsd: number } }
    | { maxRuns: number; runs: number }
    | { toolName: string; maxWorkers: number }
    | DelegatedErrorData;
  invalid_model_output: { answer: unknown } | DelegatedErrorData;
  output_schema_validation_failed: { toolName: string; issues: SchemaIssue[] } | DelegatedErrorData;
  model_error: OpenErrorData;
  rejected_by_user: OpenErrorData;
  cancelled_by_user: Record<string, never>;
  worker_error: OpenErrorData;
  max_tokens_exceeded: { model: string; maxTokens: number | null; partial?: string } | DelegatedErrorData;
  insufficient_context: { request: { missing: string[]; why: string } };
  no_model_available_for_tier: { tier: string; model?: string };
  invalid_input: { request: string; location: string; issues: { pointer: string; message: string }[] };
  usage_error: OpenErrorData;
};

/**
 * The data an error of code `C` is made with; for an error of any code, as when it is read back
 * from JSON or passed on with its code, the fields of ErrorFields with their types and any others.
 */
export type ErrorData<C extends ErrorCode = ErrorCode> = ErrorCode extends C ? OpenErrorData : ErrorDataMap[C];

/** The arguments after the message: the data, which may be left out only when the code's data has no required field, and the cause. */
type ErrorArguments<C extends ErrorCode> =
  Record<never, never> extends ErrorData<C> ? [data?: ErrorData<C>, options?: { cause?: unknown }] : [data: ErrorData<C>, options?: { cause?: unknown }];

/** The base of every error the runtime raises on purpose; `C` is its code, which types its data. */
export class ProtocolError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  /** The code's data (ErrorDataMap); an error read back from JSON may carry more fields. */
  readonly data: ErrorDataMap[C] & OpenErrorData;
  constructor(code: C, message: string, ...[data, options]: ErrorArguments<C>) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.data = (data ?? {}) as ErrorDataMap[C] & OpenErrorData;
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
export class InputError extends ProtocolError<'invalid_input'> {
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
export class CallError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** The model answered something unusable, or its provider failed. */
export class ModelError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** An Activity threw. */
export class ActivityError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** A delegate could not be resolved, loaded or run. */
export class DelegateError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** A bound was hit: steps, depth, budget, tokens. */
export class BoundError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** The user rejected or cancelled. */
export class UserError<C extends ErrorCode = ErrorCode> extends ProtocolError<C> {}

/** Bad usage: a wrong command line, or a run set up wrongly (no model chosen, a missing API key, a bad cassette or models file). */
export class UsageError extends ProtocolError<'usage_error'> {
  constructor(message: string, data: ErrorData<'usage_error'> = {}) {
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
