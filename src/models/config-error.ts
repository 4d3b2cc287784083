/** The error for bad model configuration files (cassettes, models.json): every problem with its file and JSON pointer. */
import type { ErrorObject } from 'ajv';
import { formatProblem, UsageError, type Problem } from '../protocol/errors.js';
import { describeErrors } from '../protocol/schemas.js';

/**
 * A model configuration file (a replay cassette, a models.json) is unreadable or invalid. It is a
 * usage error (code `usage_error`): reported before any model is called.
 */
export class ModelConfigError extends UsageError {
  /** Every problem found, each naming the file and the JSON pointer. */
  readonly problems: Problem[];
  constructor(what: string, problems: Problem[]) {
    super(`Invalid ${what}:\n${problems.map((problem) => `  ${formatProblem(problem)}`).join('\n')}`);
    this.problems = problems;
    this.data.problems = problems;
  }
}

/** Turns ajv errors into Problems of `document`, one sentence each (the project's one describer). */
export function problemsFromAjv(errors: ErrorObject[] | null | undefined, document: string): Problem[] {
  return describeErrors(errors).map((issue) => ({ document, pointer: issue.pointer, message: issue.message }));
}
