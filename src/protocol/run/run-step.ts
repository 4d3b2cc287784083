/** One model step of a run: render, ask, run the answer's calls, and decide whether the run is done (LOOP-3, LOOP-4, LOOP-6). */
import { throwIfCancelled } from '../cancellation.js';
import { askModel, checkBounds } from './ask-model.js';
import { EMPTY_PROMPT, SOLUTION_INSTRUCTIONS } from '../constants.js';
import type { CallScope } from '../calls/call-scope.js';
import { nestingProblem } from '../json.js';
import type { ProviderFile, ProviderMessage } from '../model.js';
import { approvePlan } from '../calls/approve-plan.js';
import { isCall } from '../calls/call-ledger.js';
import { adoptPlan, planProblems, plansOf, runEagerPlans } from '../calls/run-plans.js';
import { batchFor, flushErrors } from '../calls/run-batch.js';
import type { RunUsage } from './run-usage.js';
import { renderContext, type RenderedContext } from '../messages/render-context.js';
import type { CallBatch } from '../calls/call-batch.js';
import { formatIssues, validateAgainst } from '../schemas.js';
import type { SolutionParts } from './solution-parts.js';
import { answersInPlainText, answersWithOutputObject, offersCalls } from '../tools/tools.js';
import type { Call, JsonSchema, PlanMessage, RequestConfig, RequestDocument } from '../types.js';

/** What a step (or the plans before the first step) leads to: another step, or the run's output. */
export type StepOutcome = { kind: 'continue' } | { kind: 'completed'; output: unknown };

/** Everything a run's steps share. */
export interface RunState {
  scope: CallScope;
  document: RequestDocument;
  usage: RunUsage;
  /** The run is a lazy planner (PLAN-7): its answer's calls are its output, not executed. */
  lazy: boolean;
  /** The document's plans that are its last word, run before the model is asked (PLAN-2). */
  openingPlans: readonly PlanMessage[];
  output: OutputCheck;
  /** What the run keeps of its answers' advisors and meta (ADV-9, MSG-23). */
  parts: SolutionParts;
  /** System instructions of the run's built-in tools, sent after the Solution instructions (DEL-24). */
  instructions: readonly string[];
  /** Attachments sent as native parts on the first user message of every step (ATT-6). */
  files: readonly ProviderFile[];
}

/**
 * The written `†output` (LOOP-6, LOOP-7): checked whenever new writes to it arrived, so an invalid
 * value is reported to the model once, not again every step.
 */
export class OutputCheck {
  private seen = 0;

  constructor(
    private readonly scope: CallScope,
    private readonly schema: RequestDocument['schema'],
  ) {}

  /** The run's outcome from what was written to `†output` so far. */
  check(): StepOutcome {
    const writes = this.scope.store.count('output');
    if (writes === this.seen) return { kind: 'continue' };
    this.seen = writes;
    const written = this.scope.store.view('output', undefined);
    if (!written.found) return { kind: 'continue' };
    const issues = validateAgainst(this.schema, written.value);
    if (issues.length === 0) return { kind: 'completed', output: written.value };
    this.scope.errors.push({
      type: 'error',
      call: { _tool: '†output' },
      error: { code: 'output_schema_validation_failed', message: `The value written to †output does not match the output schema: ${formatIssues(issues)}` },
    });
    return { kind: 'continue' };
  }
}

/** What a step asks the model: the rendered prompt, the Solution schema and the answer checks beside it (LOOP-3, MSG-21). */
interface StepPrompt {
  messages: ProviderMessage[];
  schema: JsonSchema;
  check: RenderedContext['checkAnswer'];
  config: RequestConfig;
  /** The answer is the output as free text (MSG-28). */
  plainText: boolean;
  /** The answer may be the output object itself, of this schema (MSG-32). */
  outputSchema: JsonSchema | undefined;
}

/** Renders the context as it is now and composes the Solution schema from the tools defined now (LOOP-3). */
function promptFor(run: RunState, step: number): StepPrompt {
  const { scope, document } = run;
  const instances = scope.store.instances();
  const rendered = renderContext(scope.store.messages, scope.runtime.handlers, document.config ?? {}, {
    callStatus: (call) => scope.ledger.status(call),
    instances,
    step,
    tools: scope.store.tools,
  });
  const schema = scope.runtime.solutionSchemas.schemaFor({
    tools: scope.store.tools,
    outputSchema: document.schema,
    hasActivity: (name) => scope.runtime.hasActivity(name),
    extraProperties: rendered.solutionProperties,
    instances,
    planning: run.lazy,
    additions: { required: rendered.solutionRequired, definitions: rendered.solutionDefinitions },
  });
  // A step without calls has no instructions of its own: the provider carries the Solution schema (MSG-27).
  const messages: ProviderMessage[] = [
    ...(offersCalls(schema) ? [{ role: 'system', content: SOLUTION_INSTRUCTIONS } satisfies ProviderMessage] : []),
    ...run.instructions.map((content): ProviderMessage => ({ role: 'system', content })),
    // An empty or blank text is not sent, whoever wrote it: one provider refuses it, another ignores it (MSG-31).
    ...withFiles(rendered.messages.filter(hasText), run.files),
  ];
  // A provider needs at least one message; a context that renders nothing still asks for its answer.
  if (messages.length === 0) messages.push({ role: 'user', content: EMPTY_PROMPT });
  // A planner's answer is its calls, never plain text (MSG-28) nor the output alone (MSG-32).
  const plainText = !run.lazy && answersInPlainText(schema);
  const outputSchema = !run.lazy && !plainText && answersWithOutputObject(schema, document.schema) ? document.schema : undefined;
  return { messages, schema, check: rendered.checkAnswer, config: rendered.config, plainText, outputSchema };
}

/** Runs one model step; throws a ProtocolError for what ends the run (a bound, the model, a cancellation). */
export async function runStep(run: RunState): Promise<StepOutcome> {
  const { scope } = run;
  const model = scope.run.model;
  const step = run.usage.steps++;
  const { messages, schema, check, config, plainText, outputSchema } = promptFor(run, step);
  // A step whose Solution offers no calls (TOOL-22) can start none: it needs no batch.
  const batch = run.lazy || !offersCalls(schema) ? undefined : batchFor(scope);
  const startCall = callStarter(batch, step);
  const solution = await askModel(scope, {
    model: model as NonNullable<typeof model>,
    info: scope.run,
    step,
    messages,
    schema,
    check,
    config,
    plainText,
    outputSchema,
    onCall: startCall,
    account: (response) => {
      run.usage.addOwn(response.usage, response.costUsd);
      scope.tree.meter?.add(response.usage, response.costUsd);
    },
  });
  checkBounds(scope.tree);
  run.parts.accept(step, solution);
  if (run.lazy) return lazyOutcome(run, solution.calls);
  for (const [index, call] of solution.calls.entries()) startCall(call, index);
  batch?.close();
  await batch?.settled();
  // The answer's calls are the strategy the next step follows, extends or replaces (PLAN-11).
  adoptPlan(scope, solution.calls.filter(isCall));
  throwIfCancelled(scope.signal);
  const outcome: StepOutcome = solution.output !== null && solution.output !== undefined ? { kind: 'completed', output: solution.output } : run.output.check();
  flushErrors(scope);
  return outcome;
}

/**
 * Adds each call of the answer to the step's batch once it has arrived, streamed or in the final
 * answer: each position once, though two identical calls at different positions are two calls.
 */
function callStarter(batch: CallBatch<unknown> | undefined, step: number): (call: Call, index: number) => void {
  const started = new Set<string>();
  return (call, index) => {
    // A call nested too deep cannot be part of a valid answer (DOC-10), and is never run.
    if (!batch || !isCall(call) || nestingProblem(call) !== undefined) return;
    const key = `${index}\u0000${JSON.stringify(call)}`;
    if (started.has(key)) return;
    started.add(key);
    batch.add({ id: typeof call._id === 'string' ? call._id : `${step}.${index}`, call });
  };
}

/**
 * A lazy planner's answer (PLAN-7, PLAN-13): a plan that fails its dry run goes back to the model;
 * one that passes is the run's output, or, when the lazy plan asks to `execute` it and it is
 * approved, the context's plan, run before the next step (PLAN-14).
 */
async function lazyOutcome(run: RunState, calls: Call[]): Promise<StepOutcome> {
  const { scope } = run;
  const problems = planProblems(scope, calls);
  if (problems.length > 0) {
    scope.errors.push(...problems);
    flushErrors(scope);
    return { kind: 'continue' };
  }
  const plan: PlanMessage = { type: 'plan', mode: 'eager', calls };
  if (!plansOf(scope).plans.some((message) => message.mode === 'lazy' && message.execute === true)) return { kind: 'completed', output: plan };
  const approved = await approvePlan(scope, calls);
  if (!approved) return { kind: 'completed', output: plan };
  const problemsAfterEdit = approved === calls ? [] : planProblems(scope, approved);
  if (problemsAfterEdit.length > 0) {
    scope.errors.push(...problemsAfterEdit);
    flushErrors(scope);
    return { kind: 'continue' };
  }
  scope.store.remove((message) => message.type === 'plan');
  const adopted: PlanMessage = { type: 'plan', mode: 'eager', calls: approved };
  scope.store.append(adopted);
  run.lazy = false;
  await runEagerPlans(scope, [adopted]);
  const outcome = run.output.check();
  flushErrors(scope);
  return outcome;
}

/** True for a message with text to send: not empty, not only whitespace (MSG-31). */
function hasText(message: ProviderMessage): boolean {
  return message.content.trim() !== '';
}

/** The rendered messages with the run's attachment files on the first user message, or on a user message of their own after them when there is none (ATT-6). */
function withFiles(messages: ProviderMessage[], files: readonly ProviderFile[]): ProviderMessage[] {
  if (files.length === 0) return messages;
  const first = messages.findIndex((message) => message.role === 'user');
  if (first === -1) return [...messages, { role: 'user', content: 'Attached files follow.', files: [...files] }];
  return messages.map((message, index) => (index === first ? { ...message, files: [...(message.files ?? []), ...files] } : message));
}
