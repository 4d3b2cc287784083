/** The execution loop: plans first, then model steps, calls in parallel, errors fed back, until a valid output. */
import type { Model, ModelResponse, ModelRetry, ProviderMessage } from './model.js';
import { addCost, addUsage, zeroUsage } from './usage.js';
import { CallBatch, type BatchEntry } from './call-batch.js';
import { DEFAULT_MAX_STEPS, MAX_REASKS, SOLUTION_INSTRUCTIONS } from './constants.js';
import { runSignal, throwIfCancelled } from './abort.js';
import { BudgetMeter } from './budget.js';
import { TreeBounds, treeLimits } from './tree-bounds.js';
import { ContextStore } from './context-store.js';
import { BoundError, cancelled, ModelError, ProtocolError, UsageError, toProtocolError } from './errors.js';
import { newId } from './ids.js';
import { executeCall, prepareCall, recordFailure, type CallScope } from './execute-call.js';
import { nestingMessage, nestingProblem } from './json.js';
import type { LoadedRequest } from './load-request.js';
import { givenInput } from './messages/input.js';
import { describeCycle, findCycle } from './plan-graph.js';
import { renderContext } from './render-context.js';
import type { RunInfo, RunOptions, RunResult, Runtime } from './runtime.js';
import type { UsageSummary } from './usage.js';
import { compileSchema, describeErrors, validateAgainst } from './schemas.js';
import { composeSolutionSchema } from './tools.js';
import { RunTrace, Tracer } from './trace.js';
import type { Call, ErrorMessage, JsonSchema, PlanMessage, Solution, Usage } from './types.js';

function summary(usage: Usage, costUsd: number | null, steps: number, toolCalls: number, ms: number): UsageSummary {
  return { ...usage, costUsd, steps, toolCalls, ms };
}

/** Why the loop stopped with an output. */
class Completed {
  constructor(readonly output: unknown) {}
}

/** Runs a loaded Request to completion; every failure ends as a typed error with a complete trace. */
export async function runRequest(runtime: Runtime, loaded: LoadedRequest, given: RunOptions): Promise<RunResult> {
  const limits = given.budget ?? loaded.document.config?.budget;
  const cancellation = runSignal(given.signal);
  // The top run of a budgeted tree creates the meter; the options carry it, the tree's bounds
  // (created below) and the run's own signal to every descendant.
  const options: RunOptions = { ...given, signal: cancellation.signal, ...(given.meter || !limits ? {} : { meter: new BudgetMeter(limits) }) };
  const started = Date.now();
  const runId = options.runId ?? newId('run');
  const depth = options.parent ? options.parent.depth + 1 : 0;
  const tracer = options.tracer ?? new Tracer();
  const trace = new RunTrace(tracer, runId, options.parent?.run ?? null, depth);
  const signal = cancellation.signal;
  let own = zeroUsage();
  let ownCost: number | null = 0;
  let descendants = zeroUsage();
  let descendantCost: number | null = 0;
  const counters = { toolCalls: 0 };
  let steps = 0;
  const usageNow = () => summary(own, ownCost, steps, counters.toolCalls, Date.now() - started);
  const usageTotalNow = () => summary(addUsage(own, descendants), addCost(ownCost, descendantCost), steps, counters.toolCalls, Date.now() - started);

  const info: RunInfo = {
    id: runId,
    name: options.name ?? loaded.name,
    location: loaded.location,
    depth,
    parent: options.parent?.run ?? null,
    trusted: options.trusted ?? true,
    model: options.model,
  };
  trace.emit('run.started', { request: loaded.location, name: info.name, model: options.model?.id ?? null, input: options.input ?? null });

  try {
    // The top run creates its tree's bounds (DEL-19, LOOP-16), counting itself as the first run.
    options.treeBounds ??= new TreeBounds(treeLimits(given));
    let request = loaded;
    for (const prepare of runtime.preparers) request = await prepare(request, options, runtime);
    const document = request.document;
    const store = new ContextStore(document.context, runtime.handlers);
    if (options.input !== undefined) store.append(givenInput(document, options.input));
    const maxSteps = options.maxSteps ?? document.config?.maxSteps ?? DEFAULT_MAX_STEPS;
    const scope: CallScope = {
      runtime,
      store,
      trace,
      run: info,
      options,
      signal,
      errors: [],
      tools: () => store.tools,
      counters,
      addDescendantUsage(usage) {
        descendants = addUsage(descendants, usage);
        descendantCost = addCost(descendantCost, usage.costUsd);
      },
    };

    // †output is checked whenever new writes to it arrived, so an invalid value is reported once.
    let outputWrites = 0;
    const checkOutput = (): Completed | undefined => {
      const writes = store.count('output');
      if (writes === outputWrites) return undefined;
      outputWrites = writes;
      const written = store.view('output', undefined);
      if (!written.found) return undefined;
      const issues = validateAgainst(document.schema, written.value);
      if (issues.length === 0) return new Completed(written.value);
      scope.errors.push({
        type: 'error',
        call: { _tool: '†output' },
        error: {
          code: 'output_schema_validation_failed',
          message: `The value written to †output does not match the output schema: ${issues.map((i) => `${i.pointer || '/'} ${i.message}`).join(' ')}`,
        },
      });
      return undefined;
    };

    // Plans run before the model is asked.
    const plans = store.messages.filter((message): message is PlanMessage => message.type === 'plan');
    const lazy = plans.some((plan) => plan.mode === 'lazy');
    let completed: Completed | undefined;
    for (const [planIndex, plan] of plans.entries()) {
      if (plan.mode !== 'eager' || plan.calls.length === 0) continue;
      throwIfCancelled(signal);
      await runBatch(
        scope,
        plan.calls.map((call, index) => ({ id: typeof call._id === 'string' ? call._id : `plan${planIndex}.${index}`, call })),
      );
      flushErrors(scope);
    }
    completed = checkOutput();
    flushErrors(scope);

    while (!completed) {
      throwIfCancelled(signal);
      if (steps >= maxSteps) throw new BoundError('max_steps_exceeded', `The run took ${maxSteps} model steps without producing a valid output.`, { maxSteps });
      checkBounds(options);
      const model = options.model;
      if (!model) throw new UsageError(options.noModelMessage ?? `The Request "${info.name}" needs a model, and none was given.`);
      const step = steps++;
      const rendered = renderContext(store.messages, runtime.handlers, document.config ?? {});
      const schema = composeSolutionSchema(store.tools, document.schema, (name) => runtime.hasActivity(name), rendered.solutionProperties, store.instances());
      const messages: ProviderMessage[] = [{ role: 'system', content: SOLUTION_INSTRUCTIONS }, ...rendered.messages];
      const batch = lazy ? undefined : batchFor(scope);
      const started = new Set<string>();
      const startCall = (call: Call, index: number) => {
        // A call nested too deep cannot be part of a valid answer (DOC-10), and is never run.
        if (!batch || !isCallShaped(call) || nestingProblem(call) !== undefined) return;
        // Streamed delivery and the final answer deliver each call at its index: run each position once,
        // but two identical calls at different positions are two calls.
        const key = `${index}\u0000${JSON.stringify(call)}`;
        if (started.has(key)) return;
        started.add(key);
        batch.add({ id: typeof call._id === 'string' ? call._id : `${step}.${index}`, call });
      };
      const solution = await askModel(model, scope, info, step, messages, schema, rendered.config, startCall, (response) => {
        own = addUsage(own, response.usage);
        ownCost = addCost(ownCost, response.costUsd);
        options.meter?.add(response.usage, response.costUsd);
      });
      checkBounds(options);
      if (lazy) {
        // A plan that could not run goes back to the model as errors, to be planned again.
        const problems = planProblems(solution.calls);
        if (problems.length === 0) {
          completed = new Completed({ type: 'plan', mode: 'eager', calls: solution.calls } satisfies PlanMessage);
          break;
        }
        scope.errors.push(...problems);
        flushErrors(scope);
        continue;
      }
      for (const [index, call] of solution.calls.entries()) startCall(call, index);
      batch?.close();
      await batch?.settled();
      throwIfCancelled(signal);
      if (solution.output !== null && solution.output !== undefined) completed = new Completed(solution.output);
      else completed = checkOutput();
      flushErrors(scope);
    }
    const usage = usageNow();
    const usageTotal = usageTotalNow();
    trace.emit('run.completed', { output: completed.output ?? null, usage, usageTotal });
    return { ok: true, run: runId, output: completed.output, usage, usageTotal };
  } catch (thrown) {
    const error = signal.aborted && !(thrown instanceof UsageError) ? cancelled(thrown) : toProtocolError(thrown, 'model_error');
    trace.emit('run.failed', { code: error.code, message: error.message });
    return { ok: false, run: runId, error, usage: usageNow(), usageTotal: usageTotalNow() };
  } finally {
    cancellation.release();
  }
}

/** Throws `budget_exceeded` when the tree has passed its budget (LOOP-13) or its run bound (DEL-19). */
function checkBounds(options: RunOptions): void {
  options.meter?.check();
  options.treeBounds?.check();
}

function isCallShaped(call: unknown): call is Call {
  return typeof call === 'object' && call !== null && typeof (call as Call)._tool === 'string';
}

/** A batch whose calls are prepared, executed and failed in this run's scope. */
function batchFor(scope: CallScope): CallBatch {
  return new CallBatch({
    prepare: (entry) => prepareCall(scope, entry),
    execute: (entry, call) => executeCall(scope, entry, call),
    fail: (entry, error) => recordFailure(scope, entry, entry.call, error),
    watch: (listener) => scope.store.watch(listener),
  });
}

/** Runs calls as one batch (a plan, or a step's calls) and waits for all of them. */
async function runBatch(scope: CallScope, entries: BatchEntry[]): Promise<void> {
  const batch = batchFor(scope);
  batch.addAll(entries);
  batch.close();
  await batch.settled();
}

/** Appends the step's errors to the context, where the model sees them next step. */
function flushErrors(scope: CallScope): void {
  const errors: ErrorMessage[] = scope.errors.splice(0);
  for (const error of errors) scope.store.append(error);
}

/**
 * Why a plan the model returned could not run, as error messages. Unknown tools and malformed
 * calls never get this far (the Solution schema refuses them); what is left is a dependency cycle.
 */
function planProblems(calls: Call[]): ErrorMessage[] {
  const cycle = findCycle(calls);
  if (!cycle) return [];
  return [
    { type: 'error', call: { _tool: '(plan)' }, error: { code: 'unresolved_reference', message: `The plan cannot run: ${describeCycle(calls, cycle)}.` } },
  ];
}

/**
 * Asks the model for a Solution; an answer that is not JSON or does not match the Solution
 * schema is re-asked (same step) with the validation errors, at most MAX_REASKS times.
 */
async function askModel(
  model: Model,
  scope: CallScope,
  info: RunInfo,
  step: number,
  messages: ProviderMessage[],
  schema: JsonSchema,
  config: Record<string, unknown>,
  onCall: (call: Call, index: number) => void,
  account: (response: ModelResponse) => void,
): Promise<Solution> {
  const validate = compileSchema(schema);
  let conversation = messages;
  let lastProblem = '';
  for (let attempt = 0; attempt <= MAX_REASKS; attempt++) {
    // A slot of the tree's model-call bound is held only while the model answers (LOOP-16), so a
    // run waiting for its children never holds one; the trace shows the request once it is sent.
    const release = await scope.options.treeBounds?.acquireModelSlot(scope.signal);
    let began = Date.now();
    let response: ModelResponse;
    try {
      // While this run waited for its slot, its tree may have passed a bound.
      checkBounds(scope.options);
      scope.trace.emit('model.request', { step, attempt, messages: conversation, schema });
      began = Date.now();
      const onRetry = (retry: ModelRetry) => scope.trace.emit('model.retry', { step, attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs });
      response = await model.generate({ requestName: info.name, step, messages: conversation, schema, config, signal: scope.signal, onCall, onRetry });
    } catch (error) {
      if (scope.signal.aborted) throw cancelled(error);
      if (error instanceof ProtocolError) throw error;
      throw new ModelError('model_error', `The model ${model.id} failed: ${error instanceof Error ? error.message : String(error)}`, {}, { cause: error });
    } finally {
      release?.();
    }
    account(response);
    // An answer nested too deep is refused before anything walks it (DOC-10), and traced as text.
    const tooDeep = response.solution === undefined ? undefined : nestingProblem(response.solution);
    const solution = tooDeep === undefined ? response.solution : undefined;
    scope.trace.emit('model.response', {
      step,
      attempt,
      solution: solution ?? null,
      ...(solution === undefined ? { text: response.text } : {}),
      model: response.model,
      usage: response.usage,
      costUsd: response.costUsd,
      ms: Date.now() - began,
      ...(response.responseFormat === undefined ? {} : { responseFormat: response.responseFormat }),
    });
    if (tooDeep !== undefined) {
      lastProblem = nestingMessage(tooDeep);
    } else if (solution === undefined) {
      lastProblem = 'The answer was not valid JSON.';
    } else if (validate(solution)) {
      return solution as Solution;
    } else {
      lastProblem = describeErrors(validate.errors)
        .map((issue) => `${issue.pointer || '/'}: ${issue.message}`)
        .join('\n');
    }
    conversation = [
      ...messages,
      { role: 'assistant', content: response.text },
      { role: 'user', content: `That answer does not match the Solution schema:\n${lastProblem}\nAnswer again with a corrected JSON object.` },
    ];
  }
  throw new ModelError('invalid_model_output', `The model's answer did not match the Solution schema after ${MAX_REASKS} re-asks: ${lastProblem}`);
}
