/** The execution loop: plans first, then model steps, calls in parallel, errors fed back, until a valid output (spec/loop.md). */
import type { ProviderFile } from '../model.js';
import { runSignal, throwIfCancelled } from '../cancellation.js';
import { checkBounds } from './ask-model.js';
import { BudgetMeter } from '../budget.js';
import { DEFAULT_MAX_STEPS } from '../constants.js';
import { ContextStore } from '../context/context-store.js';
import { BoundError, cancelled, UsageError, toProtocolError } from '../errors.js';
import type { CallScope } from '../calls/call-scope.js';
import { newId } from '../ids.js';
import type { LoadedRequest } from '../messages/load-request.js';
import { givenInput } from '../messages/input.js';
import { flushErrors } from '../calls/run-batch.js';
import { lastWordPlans, plansOf, runEagerPlans } from '../calls/run-plans.js';
import { OutputCheck, runStep, type RunState, type StepOutcome } from './run-step.js';
import { RunUsage } from './run-usage.js';
import { SolutionParts } from './solution-parts.js';
import type { Runtime } from './runtime.js';
import type { RunInfo, RunOptions, RunResult } from '../contracts.js';
import { RunTrace, type TraceEvent, Tracer } from '../trace/trace.js';
import { TreeBounds, treeLimits } from './tree-bounds.js';
import type { RunJournal, RunLink, TreeShares } from '../contracts.js';
import { JournalReplay, requestHash } from '../trace/journal.js';
import type { JournaledOptions } from '../trace/events.js';
import { CallLedger } from '../calls/call-ledger.js';
import { isJsonObject, type Message } from '../types.js';
import { applyToolRules } from '../tools/tool-rules.js';
import type { SandboxSpec } from '../tools/file-tools.js';
import { contextSandboxes } from '../messages/toolset.js';
import { DELEGATE_TOOL, delegationInstructions, offeredDelegateTool, type TierCatalog } from '../tools/delegate-tool.js';

/** Runs a loaded Request to completion; every failure ends as a typed error with a complete trace (LOOP-14). */
export async function runRequest(runtime: Runtime, loaded: LoadedRequest, given: RunOptions, link?: RunLink): Promise<RunResult> {
  const cancellation = runSignal(given.signal);
  // The top run of a journaled tree writes every event of the tree to the journal, as it happens (JOURNAL-2).
  const journal = link?.parent ? undefined : link?.journal;
  const tracer = given.tracer ?? new Tracer();
  const unsubscribe = journal ? tracer.subscribe((event) => journal.store.append(event)) : undefined;
  // Object.assign, not a literal opening with a spread: one that then adds properties is slow on Node 20.
  const options: RunOptions = Object.assign({}, given, { signal: cancellation.signal, tracer });
  const info = runInfo(loaded, options, link, runtime.tierCatalog);
  const trace = new RunTrace(tracer, info.id, info.parent, info.depth);
  const usage = new RunUsage();
  const replay = journal ? (journal.replay ?? new JournalReplay([])) : link?.tree?.journal;
  // `run.started` names the tools offered (TRACE-3), known once the preparers ran: what they trace
  // meanwhile (mcp.connected) is held and follows it, so the run's events still begin with it (TRACE-11).
  const held = heldTracer(tracer);
  let started = false;
  const begin = (tools?: string[]) => {
    if (started) return;
    started = true;
    startEvents(trace, loaded, options, info, replay, journal, tools);
    held.open();
  };
  let run: RunState | undefined;
  try {
    const whenDurable = journal?.store.whenDurable?.bind(journal.store);
    run = await openRun(runtime, loaded, options, {
      info,
      trace,
      usage,
      tree: link?.tree,
      files: link?.files ?? [],
      replay,
      whenDurable,
      held: held.tracer,
      begin,
    });
    const output = await loop(run, options.maxSteps ?? run.document.config?.maxSteps ?? DEFAULT_MAX_STEPS);
    const parts = run.parts.resultFields();
    trace.emit('run.completed', { output: output ?? null, ...parts, usage: usage.usage(), usageTotal: usage.usageTotal() });
    return { ok: true, run: info.id, output, ...parts, usage: usage.usage(), usageTotal: usage.usageTotal(), context: endContext(run) };
  } catch (thrown) {
    begin();
    const error = options.signal?.aborted && !(thrown instanceof UsageError) ? cancelled(thrown) : toProtocolError(thrown, 'model_error');
    // `code` and `message` stay flat (TRACE-10); `error` is the same error as data, as call.failed has it (ERR-1).
    // The usage lets a resume count what a failed child used without running it again (JOURNAL-5).
    trace.emit('run.failed', { code: error.code, message: error.message, error: error.toJSON(), usage: usage.usage(), usageTotal: usage.usageTotal() });
    return { ok: false, run: info.id, error, usage: usage.usage(), usageTotal: usage.usageTotal(), ...(run ? { context: endContext(run) } : {}) };
  } finally {
    unsubscribe?.();
    cancellation.release();
    // A top run's end is its tree's: what was kept for the tree is released (LOOP-19).
    if (!link) await runtime.endTree(info.root ?? info.id);
  }
}

/**
 * The events a run begins with: `run.started`, or `run.resumed` for a run the journal shows started
 * (JOURNAL-6); in the top run of a journaled tree, `journal.started` after it, or `journal.resumed`
 * before it (JOURNAL-2, JOURNAL-9). The Request's hash is recorded only when the tree has a journal.
 */
function startEvents(
  trace: RunTrace,
  loaded: LoadedRequest,
  options: RunOptions,
  info: RunInfo,
  replay: JournalReplay | undefined,
  journal: RunJournal | undefined,
  tools: string[] | undefined,
): void {
  const model = options.model?.id ?? null;
  if (replay?.hasRun(info.id)) {
    if (journal) {
      trace.emit('journal.resumed', { events: journal.store.events.length, ignored: journal.store.ignored ?? null, overrides: journal.overrides ?? [] });
    }
    trace.emit('run.resumed', { request: loaded.location, name: info.name, model });
    return;
  }
  const hash = replay ? { requestHash: requestHash(loaded.document) } : {};
  // The OpenTelemetry trace the run's spans go to, so the two views can be joined (TEL-7).
  const traceId = trace.tracer.traceIdOf(info.id, info.parent);
  trace.emit('run.started', {
    request: loaded.location,
    name: info.name,
    model,
    input: options.input ?? null,
    ...hash,
    ...(tools ? { tools } : {}),
    ...(traceId === undefined ? {} : { traceId }),
  });
  if (journal) trace.emit('journal.started', { options: journaledOptions(options), settings: options.journalSettings ?? {} });
}

/** The run options a resume takes from the journal (JOURNAL-3): the JSON ones that shape the run; the model, observers and hooks are the front end's. */
function journaledOptions(options: RunOptions): JournaledOptions {
  const kept: JournaledOptions = {};
  for (const key of ['maxSteps', 'maxDepth', 'resolve', 'maxConcurrency', 'maxRuns', 'budget', 'trusted', 'name'] as const) {
    if (options[key] !== undefined) (kept as Record<string, unknown>)[key] = options[key];
  }
  return kept;
}

/** The run's context as it ended (LOOP-17): errors still queued are part of it. */
function endContext(run: RunState): Message[] {
  flushErrors(run.scope);
  return [...run.scope.store.messages];
}

/**
 * What the run's tree shares (LOOP-13, LOOP-16, DEL-19): a child gets its caller's; the top run
 * creates them, counting itself as the tree's first run, with a budget meter when it has a budget.
 */
function treeShares(
  runtime: Runtime,
  root: string,
  loaded: LoadedRequest,
  options: RunOptions,
  journal: JournalReplay | undefined,
  whenDurable: TreeShares['whenDurable'],
): TreeShares {
  const limits = options.budget ?? loaded.document.config?.budget;
  // A tree whose children run elsewhere shares its meter with them through the runner (QUEUE-6).
  const meter = limits ? (runtime.childRunner?.meter?.(root, limits, journal?.session) ?? new BudgetMeter(limits)) : undefined;
  const bounded = treeLimits(options);
  // So are its run bounds: every process admits against the tree's one count (QUEUE-20).
  const bounds = runtime.childRunner?.bounds?.(root, bounded, journal?.session) ?? new TreeBounds(bounded);
  return { meter, bounds, ...(journal ? { journal } : {}), ...(whenDurable ? { whenDurable } : {}) };
}

/** The run's `config.attachments` as RunInfo carries it (ATT-3): only when it is an object. */
function attachmentPolicy(policy: unknown): { attachments?: Record<string, unknown> } {
  return isJsonObject(policy) ? { attachments: policy } : {};
}

/** The run's `files` sandboxes as RunInfo carries them (ATT-2): only when it declares any. */
function sandboxesOf(context: readonly Message[]): { sandboxes?: Record<string, SandboxSpec> } {
  const sandboxes = contextSandboxes(context);
  return Object.keys(sandboxes).length === 0 ? {} : { sandboxes };
}

/** Facts about the run that Activities and the trace see. */
function runInfo(loaded: LoadedRequest, options: RunOptions, link: RunLink | undefined, catalog: TierCatalog | undefined): RunInfo {
  const name = options.name ?? loaded.name;
  const standsFor = catalog?.standsFor({ model: options.model, document: loaded.document, name });
  const id = options.runId ?? newId('run');
  return {
    id,
    root: link?.parent?.root ?? id,
    name,
    location: loaded.location,
    depth: link?.parent ? link.parent.depth + 1 : 0,
    parent: link?.parent?.run ?? null,
    ...(link?.parent?.lineage === undefined ? {} : { lineage: link.parent.lineage }),
    trusted: options.trusted ?? true,
    model: options.model,
    ...(loaded.document.config?.delegates === undefined ? {} : { delegates: loaded.document.config.delegates }),
    ...(link?.worker ? { worker: true } : {}),
    ...(standsFor === undefined ? {} : { standsFor }),
    ...(loaded.document.config?.delegation === undefined ? {} : { delegation: loaded.document.config.delegation }),
    ...attachmentPolicy(loaded.document.config?.attachments),
    ...(loaded.document.config?.toolRules === undefined ? {} : { toolRules: loaded.document.config.toolRules }),
    ...sandboxesOf(loaded.document.context),
  };
}

/** Prepares the document and opens its context: the preparers, the given input (DATA-8), the calls' scope. */
async function openRun(
  runtime: Runtime,
  loaded: LoadedRequest,
  options: RunOptions,
  run: {
    info: RunInfo;
    trace: RunTrace;
    usage: RunUsage;
    tree: TreeShares | undefined;
    files: ProviderFile[];
    replay: JournalReplay | undefined;
    /** When the tree's journal flushes in groups: what its effects wait for (JOURNAL-2). */
    whenDurable: TreeShares['whenDurable'];
    /** What the preparers trace to, held until the run has started. */
    held: Tracer;
    /** Writes `run.started` with the tools offered. */
    begin: (tools?: string[]) => void;
  },
): Promise<RunState> {
  const { info, trace, usage } = run;
  // Inside the run, so that bounds given wrongly fail it with a complete trace.
  const tree = run.tree ?? treeShares(runtime, info.root ?? info.id, loaded, options, run.replay, run.whenDurable);
  let request = loaded;
  const preparing = Object.assign({}, options, { tracer: run.held });
  for (const prepare of runtime.preparers) request = await prepare(request, preparing, runtime, info);
  const document = request.document;
  // The built-in delegate tool, when offered, is defined before the document's own tools (DEL-24).
  const delegateTool = offeredDelegateTool(runtime.tierCatalog, document, info);
  // Tool rules apply to it as to every tool (TOOL-21): forbidden, it is not offered.
  const rules = document.config?.toolRules ?? [];
  const builtins = new Map(delegateTool ? [[DELEGATE_TOOL, delegateTool]] : []);
  applyToolRules(builtins, rules);
  const store = new ContextStore(document.context, runtime.handlers, Object.fromEntries(builtins), rules);
  // Taken before the given input joins the context: that input is the plans' parameters, not a newer instruction (PLAN-2).
  const openingPlans = lastWordPlans(store.messages);
  run.begin([...store.tools.keys()]);
  if (options.input !== undefined) store.append(givenInput(document, options.input));
  const scope: CallScope = {
    runtime,
    store,
    trace,
    run: info,
    options,
    tree,
    startRun: (child, childOptions, childLink) => runRequest(runtime, child, childOptions, childLink),
    signal: options.signal as AbortSignal,
    errors: [],
    tools: () => store.tools,
    counters: usage.counters,
    ledger: new CallLedger(),
    children: new Map(),
    addDescendantUsage: (summary) => usage.addDescendant(summary),
  };
  scope.ledger.learn(store.messages);
  const { lazy } = plansOf(scope);
  // Said in the prompt too, unless the document's own `delegate` tool replaced the built-in one.
  const offered = builtins.has(DELEGATE_TOOL) && store.tools.get(DELEGATE_TOOL) === builtins.get(DELEGATE_TOOL);
  const instructions = offered && runtime.tierCatalog ? [delegationInstructions(runtime.tierCatalog.tiers())] : [];
  return {
    scope,
    document,
    usage,
    lazy,
    openingPlans,
    output: new OutputCheck(scope, document.schema),
    parts: new SolutionParts(scope),
    instructions,
    files: run.files,
  };
}

/** Plans first (LOOP-2), then steps until an output, each step bounded (LOOP-9, LOOP-13) and cancellable (LOOP-10). */
async function loop(run: RunState, maxSteps: number): Promise<unknown> {
  const { scope } = run;
  await runEagerPlans(scope, run.openingPlans);
  endIfEnded(scope);
  let outcome: StepOutcome = run.output.check();
  flushErrors(scope);
  while (outcome.kind === 'continue') {
    throwIfCancelled(scope.signal);
    if (run.usage.steps >= maxSteps)
      throw new BoundError('max_steps_exceeded', `The run took ${maxSteps} model steps without producing a valid output.`, { maxSteps });
    checkBounds(scope.tree);
    // The reason lets a front end say how to choose a model its own way (CLI-3).
    if (!scope.run.model) throw new UsageError(`The Request "${scope.run.name}" needs a model, and none was given.`, { reason: 'no_model' });
    outcome = await runStep(run);
    endIfEnded(scope);
  }
  return outcome.output;
}

/** Fails the run with the error an Activity ended it with (LOOP-18), once its calls have settled. */
function endIfEnded(scope: CallScope): void {
  if (scope.ended) throw scope.ended;
}

/** A Tracer holding what is emitted to it until `open`, then passing it on to `target`, held events first. */
function heldTracer(target: Tracer): { tracer: Tracer; open(): void } {
  let held: TraceEvent[] | undefined = [];
  const tracer = new Tracer([
    (event) => {
      if (held) held.push(event);
      else target.emit(event);
    },
  ]);
  return {
    tracer,
    open() {
      const events = held ?? [];
      held = undefined;
      for (const event of events) target.emit(event);
    },
  };
}
