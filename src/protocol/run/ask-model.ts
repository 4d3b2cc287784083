/** Asking the model for one step's Solution: bounded, traced, and re-asked while the answer is unusable (LOOP-8). */
import { MAX_REASKS } from '../constants.js';
import { cancelled, ModelError, ProtocolError } from '../errors.js';
import type { CallScope } from '../calls/call-scope.js';
import { nestingMessage, nestingProblem } from '../json.js';
import type { Model, ModelRequest, ModelResponse, ModelRetry, ProviderMessage } from '../model.js';
import type { TracedProviderMessage } from '../trace/events.js';
import type { TreeShares } from '../contracts.js';
import type { RunInfo } from '../contracts.js';
import { compileSchema, describeErrors, formatIssues } from '../schemas.js';
import { withoutEmptyCalls } from '../tools/tools.js';
import { isJsonObject, type Call, type JsonSchema, type Solution } from '../types.js';

/** Throws `budget_exceeded` when the tree has passed its budget (LOOP-13) or its run bound (DEL-19). */
export function checkBounds(tree: TreeShares): void {
  tree.meter?.check();
  tree.bounds.check();
}

/** What one step asks the model. */
export interface StepQuestion {
  model: Model;
  info: RunInfo;
  step: number;
  messages: ProviderMessage[];
  /** The composed Solution schema the answer must match. */
  schema: JsonSchema;
  /** The rules of the answer beyond the schema (MSG-21); an answer with problems is re-asked like an invalid one. */
  check?: (answer: Record<string, unknown>) => string[];
  config: Record<string, unknown>;
  /** Told each call as soon as it has arrived (LOOP-11). */
  onCall: (call: Call, index: number) => void;
  /** Told every answer, to count its usage. */
  account: (response: ModelResponse) => void;
  /** The answer is the output as free text (MSG-28). */
  plainText?: boolean;
  /** The answer may be the output object itself, of this schema (MSG-32). */
  outputSchema?: JsonSchema | undefined;
}

/**
 * Asks the model for a Solution; an answer that is not JSON or does not match the Solution
 * schema is re-asked (same step) with the validation errors, at most MAX_REASKS times.
 */
export async function askModel(scope: CallScope, question: StepQuestion): Promise<Solution> {
  const validate = compileSchema(question.schema);
  let conversation = question.messages;
  let lastProblem = '';
  let lastAnswer: unknown = null;
  for (let attempt = 0; attempt <= MAX_REASKS; attempt++) {
    // An answer the journal holds is replayed, not asked again (JOURNAL-4): it needs no slot.
    const replayed = scope.tree.journal?.answer(question.info.id, question.step, attempt);
    // A slot of the tree's model-call bound is held only while the model answers (LOOP-16), so a
    // run waiting for its children never holds one; it is given back once the answer is traced.
    const release = replayed ? () => undefined : await scope.tree.bounds.acquireModelSlot(scope.signal);
    let response: Answer;
    let judged: ReturnType<typeof judge>;
    try {
      response = replayed ? { ...replayed, began: Date.now(), replayed: true } : await sendOnce(scope, question, attempt, conversation);
      question.account(response);
      judged = judge(scope, question, attempt, response, validate);
    } finally {
      release();
    }
    if ('solution' in judged) return judged.solution;
    lastProblem = judged.problem;
    lastAnswer = response.solution !== undefined && nestingProblem(response.solution) === undefined ? response.solution : response.text;
    conversation = [
      ...question.messages,
      // An empty or blank answer is not sent back, like any empty text (MSG-31).
      ...(response.text.trim() === '' ? [] : [{ role: 'assistant', content: response.text } satisfies ProviderMessage]),
      { role: 'user', content: `That answer does not match the Solution schema:\n${lastProblem}\nAnswer again with a corrected JSON object.` },
    ];
  }
  // The last answer goes with the error, so a caller can tell what the model said (DEL-26: a worker's raw output).
  throw new ModelError('invalid_model_output', `The model's answer did not match the Solution schema after ${MAX_REASKS} re-asks: ${lastProblem}`, {
    answer: lastAnswer,
  });
}

/** An answer as the loop judges it: when it began, and whether the journal gave it (JOURNAL-4). */
type Answer = ModelResponse & { began: number; replayed?: boolean };

/** One attempt, sent once this run holds a model-call slot; a failure becomes a typed error. */
async function sendOnce(scope: CallScope, question: StepQuestion, attempt: number, messages: ProviderMessage[]): Promise<Answer> {
  const { model, info, step, schema, config, onCall, check, plainText, outputSchema } = question;
  try {
    // While this run waited for its slot, its tree may have passed a bound.
    checkBounds(scope.tree);
    if (scope.trace.listening) {
      const schemaForm = plainText ? undefined : model.schemaFormOf?.({ schema });
      scope.trace.emit('model.request', { step, attempt, messages: messages.map(tracedMessage), schema, ...(schemaForm ? { schemaForm } : {}) });
      // Its model.request is on the disk before the request goes out (JOURNAL-2).
      const durable = scope.tree.whenDurable?.();
      if (durable) await durable;
    }
    const began = Date.now();
    const onRetry = (retry: ModelRetry) => scope.trace.emit('model.retry', { step, attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs });
    const request: ModelRequest = { requestName: info.name, step, messages, schema, config, signal: scope.signal, onCall, onRetry };
    if (check !== undefined) request.check = check;
    if (plainText) request.plainText = true;
    if (outputSchema !== undefined) request.outputSchema = outputSchema;
    const response = await model.generate(request);
    return Object.assign({}, response, { began });
  } catch (error) {
    if (scope.signal.aborted) throw cancelled(error);
    if (error instanceof ProtocolError) throw error;
    throw new ModelError('model_error', `The model ${model.id} failed: ${error instanceof Error ? error.message : String(error)}`, {}, { cause: error });
  }
}

/** Traces an answer and says whether it is a usable Solution, or what is wrong with it. */
function judge(
  scope: CallScope,
  question: StepQuestion,
  attempt: number,
  response: Answer,
  validate: ReturnType<typeof compileSchema>,
): { solution: Solution } | { problem: string } {
  // An answer nested too deep is refused before anything walks it (DOC-10), and traced as text.
  const tooDeep = response.solution === undefined ? undefined : nestingProblem(response.solution);
  const solution = tooDeep === undefined ? response.solution : undefined;
  // A replayed answer's model.response is in the journal already: it is said, not traced again (JOURNAL-4).
  if (response.replayed) scope.trace.emit('model.replayed', { step: question.step, attempt, usage: response.usage, costUsd: response.costUsd });
  else
    scope.trace.emit('model.response', {
      step: question.step,
      attempt,
      solution: solution ?? null,
      ...(solution === undefined ? { text: response.text } : {}),
      model: response.model,
      usage: response.usage,
      costUsd: response.costUsd,
      ...(response.replayOf === undefined ? {} : { replayOf: response.replayOf }),
      ms: Date.now() - response.began,
      ...(response.responseFormat === undefined ? {} : { responseFormat: response.responseFormat }),
      ...(response.schemaForm === undefined ? {} : { schemaForm: response.schemaForm }),
    });
  if (tooDeep !== undefined) return { problem: nestingMessage(tooDeep) };
  if (solution === undefined) return { problem: 'The answer was not valid JSON.' };
  // Without tools the schema has no `calls` (TOOL-22): an empty one is tolerated, and none means none.
  const answer = withoutEmptyCalls(solution, question.schema);
  const valid = validate(answer);
  // The rules beyond the schema are said too when they can be judged, so one re-ask can fix everything.
  const problems = isJsonObject(answer) ? (question.check?.(answer) ?? []) : [];
  if (valid && problems.length === 0)
    return {
      solution: isJsonObject(answer) && answer.calls === undefined ? (Object.assign({}, answer, { calls: [] }) as unknown as Solution) : (answer as Solution),
    };
  const issues = valid ? [] : [formatIssues(describeErrors(validate.errors), { lines: true })];
  return { problem: [...issues, ...problems].join('\n') };
}

/** A sent message as the trace keeps it (ATT-7): its files by `{path, mediaType, bytes}`, never their bytes. */
function tracedMessage(message: ProviderMessage): TracedProviderMessage {
  const { files, ...rest } = message;
  if (files === undefined) return rest;
  return { ...rest, files: files.map((file) => ({ path: file.path, mediaType: file.mediaType, bytes: file.data.byteLength })) };
}
