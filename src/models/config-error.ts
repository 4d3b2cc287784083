/** The error for bad model configuration files (cassettes, models.json): every problem with its file and JSON pointer. */
import type { ErrorObject } from 'ajv';
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

/** Turns ajv errors into Problems of `document`, one sentence each, dropping oneOf noise. */
export function problemsFromAjv(errors: ErrorObject[] | null | undefined, document: string): Problem[] {
  const all = errors ?? [];
  const oneOfPaths = new Set(all.filter((error) => error.keyword === 'oneOf').map((error) => error.instancePath));
  const problems: Problem[] = [];
  for (const error of all) {
    // A failing oneOf also reports each branch's failure; the oneOf error alone says it better.
    if (error.keyword !== 'oneOf' && error.schemaPath.includes('/oneOf/') && oneOfPaths.has(error.instancePath)) continue;
    problems.push({ document, pointer: pointerOf(error), message: sentenceOf(error) });
  }
  return problems;
}

function pointerOf(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') {
    return `${error.instancePath}/${escapePointer(String(error.params.additionalProperty))}`;
  }
  return error.instancePath;
}

function sentenceOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return `The property "${String(error.params.missingProperty)}" is required.`;
    case 'additionalProperties':
      return `The property "${String(error.params.additionalProperty)}" is not allowed here.`;
    case 'oneOf':
      return typeof error.parentSchema === 'object' && error.parentSchema.description
        ? String(error.parentSchema.description)
        : 'The value must match exactly one of the allowed forms.';
    default:
      return `The value ${error.message ?? 'is invalid'}.`;
  }
}

/** Escapes one JSON pointer token (RFC 6901). */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
