/** The error for bad model configuration files (cassettes, models.json): every problem with its file and JSON pointer. */
import { formatProblem, UsageError, type Problem } from '../protocol/errors.js';

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
