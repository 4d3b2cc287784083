/** Executing one call: reference resolution, validation, confirmation, the Activity (or latent result), writing the result. */
import { abortable, handedOutSignal, onAbort } from '../cancellation.js';
import { askConfirm, paramsOf } from './confirm-call.js';
import { checkChild, nextChildOrdinal, runChild } from './child-run.js';
import type { JournaledCall } from '../trace/journal.js';
import type { BatchEntry } from './call-batch.js';
import type { CallScope, RuntimeRegistries } from './call-scope.js';
import type { ActivityRegistration } from './activity-registry.js';
import { checkOutput, checkParams, withFixedMeta } from './check-call.js';
import { isDataMessage } from '../messages/data-messages.js';
import { ActivityError, CallError, cancelled, DelegateError, type ErrorJson, ProtocolError, toProtocolError, UserError } from '../errors.js';
import { NotJsonError, toJsonData } from '../json-data.js';
import { MAX_NESTING_DEPTH, nestingMessage } from '../json.js';
import { normalizeMessage } from '../messages/load-request.js';
import type { Activity, ActivityEnvironment } from '../contracts.js';
import { parseScope, scopeContext, unsigiled } from '../context/scopes.js';
import { activityNameFor, metaValue, outputSchemaOf } from '../tools/tools.js';
import { isJsonObject, type Call, type JsonSchema, type Message, type ToolSchema } from '../types.js';
import { makeWrite } from '../variables/data-records.js';
import { parseOutputPath, REFERENCE_SIGIL, type Reference } from '../variables/references.js';
import { resolveValue } from '../context/resolve-references.js';
import type { ActivityTimeout } from './pending-activities.js';

/** Looks a tool up in the live context; unknown names fail with the list of known ones. */
function toolOf(scope: CallScope, name: string): ToolSchema {
  const tools = scope.tools();
  const tool = tools.get(name);
  if (!tool) {
    const known = [...tools.keys()].join(', ') || 'none';
    throw new CallError('unknown_tool', `There is no tool named "${name}" (known tools: ${known}).`, { toolName: name, available: [...tools.keys()] });
  }
  return tool;
}

/**
 * A call whose meaning is worked out once, when it is prepared: its tool, the Activity that runs it
 * and the tool's `_output` schema. Confirming, running and writing the call take it; the Activity is
 * decided by the call as written (TOOL-17), since it decides which parameters keep their references.
 */
export interface PreparedCall {
  /** The call: its references resolved (CALL-10 parameters as written), then its tool's fixed meta-properties filled in and any edit applied. */
  call: Call;
  tool: ToolSchema;
  /** The Activity that executes the call; undefined for a latent call, whose result is its `_output`. */
  activityName: string | undefined;
  /** That Activity's registration, when one is registered under its name. */
  registration: ActivityRegistration | undefined;
  /** The tool's `_output` schema, standalone, when it declares one. */
  outputSchema: JsonSchema | undefined;
}

/** Resolves a call's references for its instance; `blocked` lists what is still missing. */
export function prepareCall(scope: CallScope, entry: BatchEntry): { status: 'ready'; call: PreparedCall } | { status: 'blocked'; missing: Reference[] } {
  const tool = toolOf(scope, entry.call._tool);
  // `_outputPath` names where to write, not a value; everything else (latent `_output` too) may hold references.
  const { _outputPath, ...rest } = entry.call;
  const lookup = (reference: Reference) => scope.store.read(reference, entry.call._instance);
  const activityName = activityNameFor(entry.call, tool, (name) => scope.runtime.hasActivity(name));
  const registration = activityName === undefined ? undefined : scope.runtime.activities.registration(activityName);
  // Parameters naming context keep their references as written (CALL-10).
  const asWritten = (registration?.namesContext ?? []).filter((name) => name in rest);
  for (const name of asWritten) delete rest[name];
  const resolved = resolveValue(rest, lookup);
  // Context named by reference is waited for like a reference (DEL-25).
  const named: Reference[] = (registration?.scopesOf?.(entry.call) ?? [])
    .filter((written) => written.startsWith(REFERENCE_SIGIL))
    .map((written) => ({ ...parseScope(unsigiled(written)), text: written }));
  const absent = named.filter((reference) => !lookup(reference).found);
  if (resolved.status === 'blocked' || absent.length > 0)
    return { status: 'blocked', missing: [...(resolved.status === 'blocked' ? resolved.missing : []), ...absent] };
  const call = { ...(resolved.value as Call) };
  for (const name of asWritten) call[name] = entry.call[name];
  if (_outputPath !== undefined) call._outputPath = _outputPath;
  return { status: 'ready', call: { call, tool, activityName, registration, outputSchema: outputSchemaOf(tool) } };
}

/** True for objects that are messages of a registered type (an Activity returning one appends it as is). */
function isMessageResult(runtime: RuntimeRegistries, value: unknown): value is Message {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Message).type === 'string' &&
    runtime.handlers.has((value as Message).type)
  );
}

/** Executes a prepared call; records success or failure, never throws: resolves to the failure, if any. */
export async function executeCall(scope: CallScope, entry: BatchEntry, prepared: PreparedCall): Promise<ProtocolError | undefined> {
  const { tool, activityName, outputSchema } = prepared;
  const toolName = prepared.call._tool;
  let current = prepared;
  try {
    // Which Activity runs the call is the tool's choice (TOOL-17), known since the call was prepared, before its meta is judged.
    current = { ...prepared, call: withFixedMeta(prepared.call, tool, activityName === undefined) };
    const call = current.call;
    checkParams(call, tool, activityName !== undefined);
    const journaled = scope.tree.journal?.takeCall(scope.run.id, entry.id, paramsOf(call));
    if (journaled && journaled.state !== 'started') return replayCall(scope, entry, current, journaled);
    scope.trace.emit('call.started', { call: entry.id, tool: toolName, params: paramsOf(call), instance: call._instance ?? null });
    // Started before and not finished: in an interrupted run (JOURNAL-5), or in an abandoned attempt at a queued job (QUEUE-31).
    const startedBefore = journaled !== undefined || scope.tree.startedCalls?.startedBefore({ run: scope.run.id, call: entry.id, tool: toolName }) === true;
    if (startedBefore && activityName !== undefined) await confirmRerun(scope, entry, current, activityName);
    current = await confirm(scope, entry, current);
    scope.counters.toolCalls++;
    if (activityName !== undefined) {
      // Its call.started is on the disk before the Activity starts (JOURNAL-2).
      const durable = scope.tree.whenDurable?.();
      if (durable) await durable;
      await recordStart(scope, entry, current.call, activityName);
    }
    const result = activityName === undefined ? current.call._output : await runActivity(scope, entry, current, activityName);
    // A message an Activity returns is appended as is; any other result must match the `_output` schema.
    if (activityName === undefined || !isMessageResult(scope.runtime, result)) checkOutput(outputSchema, result, toolName);
    writeResult(scope, entry, current, result);
    scope.trace.emit('call.completed', {
      call: entry.id,
      tool: toolName,
      result: result ?? null,
      ...(result === undefined ? { noResult: true as const } : {}),
    });
    return undefined;
  } catch (error) {
    const failure = toProtocolError(error);
    writeFailureBranch(scope, entry, current.call, failure);
    recordFailure(scope, entry, current.call, failure);
    return failure;
  }
}

/**
 * A call whose `_outputPath` declares alternative outcomes (`†state.receipt || †state.error`) and
 * fails writes its error, `{code, message}`, to the last alternative, so that calls reading it can
 * handle the failure (VAR-19, acts 011 and 012). A cancelled call writes nothing: the run is ending.
 */
function writeFailureBranch(scope: CallScope, entry: BatchEntry, call: Call, failure: ProtocolError): void {
  if (failure.code === 'cancelled_by_user' || typeof call._outputPath !== 'string') return;
  const target = parseOutputPath(call._outputPath);
  if (target?.op !== 'or' || target.targets.length < 2) return;
  const branch = target.targets[target.targets.length - 1] as Reference;
  const instance = call._instance === undefined ? {} : { instance: call._instance };
  try {
    scope.store.append(makeWrite(branch, { code: failure.code, message: failure.message }, { method: 'set', call: entry.call, ...instance }));
  } catch {
    // A branch that cannot take the error (too deep a path) leaves the failure as it is.
  }
}

/** Records a failed call: a `call.failed` event and an error message for the model. */
export function recordFailure(scope: CallScope, entry: BatchEntry, call: Call, error: ProtocolError): void {
  scope.trace.emit('call.failed', { call: entry.id, tool: call._tool, error: error.toJSON() });
  pushError(scope, entry, call, error.toJSON());
}

/** The error message of a failed call, for the model at the end of the step. */
function pushError(scope: CallScope, entry: BatchEntry, call: Call, error: ErrorJson): void {
  // `call` is what ran (references resolved); `_call` the call as written, which plans match (PLAN-10).
  scope.errors.push({ type: 'error', call: { id: entry.id, ...call }, _call: entry.call, error });
}

/**
 * A call whose execution the journal shows finished is not run again (JOURNAL-5): its result is
 * written, or its error reported, as the first time; it counts as the tool call it was, and the
 * children it started count their journaled totals, their ordinals taken as if they had started.
 */
function replayCall(scope: CallScope, entry: BatchEntry, prepared: PreparedCall, journaled: JournaledCall): ProtocolError | undefined {
  const { call } = prepared;
  scope.trace.emit('call.replayed', { call: entry.id, tool: call._tool, outcome: journaled.state === 'completed' ? 'completed' : 'failed' });
  scope.counters.toolCalls++;
  nextChildOrdinal(scope, { callId: entry.id, instance: call._instance }, journaled.children.length);
  for (const child of journaled.children) {
    const total = scope.tree.journal?.totalOf(child);
    if (!total) continue;
    scope.addDescendantUsage(total);
    scope.tree.meter?.add(total, total.costUsd);
  }
  if (journaled.state === 'completed') {
    if (!journaled.noResult) writeResult(scope, entry, prepared, journaled.result);
    return undefined;
  }
  const error = journaled.error ?? { code: 'activity_error', message: 'The call failed.' };
  const { code, message, ...data } = error;
  const failure = new ProtocolError(code, message, data);
  writeFailureBranch(scope, entry, call, failure);
  pushError(scope, entry, call, error);
  return failure;
}

/**
 * A call that had started but not finished when the run was interrupted runs again (JOURNAL-5),
 * unless its Activity says `idempotent: false`: then the confirm hook is asked first, whatever
 * the tool, and the call fails as rejected without one or when it says no.
 */
async function confirmRerun(scope: CallScope, entry: BatchEntry, prepared: PreparedCall, activityName: string): Promise<void> {
  const { call, tool } = prepared;
  if (!notIdempotent(scope.runtime, activityName)) return;
  const unsure = `The call to "${call._tool}" (${entry.id}) had started when the run was interrupted, and its Activity "${activityName}" is not idempotent: it may have taken effect already`;
  const hook = scope.options.confirm;
  if (!hook)
    throw new UserError('rejected_by_user', `${unsure}; with no way to ask whether to run it again, it was not run again.`, {
      toolName: call._tool,
      rerun: true,
    });
  const request = { call, callId: entry.id, tool, toolName: call._tool, run: scope.run, signal: handedOutSignal(scope.signal), rerun: true };
  scope.trace.emit('approval.requested', { call: entry.id, tool: call._tool, params: paramsOf(call) });
  const decision = await abortable(Promise.resolve(hook(request)), scope.signal, cancelled);
  const reason = 'reason' in decision ? (decision.reason ?? null) : null;
  scope.trace.emit('approval.decided', {
    call: entry.id,
    tool: call._tool,
    decision: decision.decision,
    reason,
    ...(decision.by === undefined ? {} : { by: decision.by }),
  });
  if (decision.decision === 'rejected')
    throw new UserError('rejected_by_user', `${unsure}; running it again was refused${reason ? `: ${reason}` : '.'}`, { toolName: call._tool, rerun: true });
}

/**
 * A call of an Activity that is not idempotent, run by a queued job, is recorded as started before
 * the Activity begins (QUEUE-31): an attempt that takes the job over then treats it as a resumed
 * journal's started call (JOURNAL-5). A record that cannot be made leaves the call unrun.
 */
async function recordStart(scope: CallScope, entry: BatchEntry, call: Call, activityName: string): Promise<void> {
  const log = scope.tree.startedCalls;
  if (!log || !notIdempotent(scope.runtime, activityName)) return;
  await log.record({ run: scope.run.id, call: entry.id, tool: call._tool, params: paramsOf(call) });
}

/** True when the Activity says its effects must not be repeated (`idempotent: false`, JOURNAL-5). */
function notIdempotent(runtime: RuntimeRegistries, activityName: string): boolean {
  return (runtime.activities.get(activityName) as (Activity & { idempotent?: unknown }) | undefined)?.idempotent === false;
}

/** Asks the confirm hook about the call: a rejection fails it, an edit replaces it, judged like the call it replaces. */
async function confirm(scope: CallScope, entry: BatchEntry, prepared: PreparedCall): Promise<PreparedCall> {
  const { call, tool } = prepared;
  const decision = await askConfirm(scope, entry.id, call, tool);
  if (!decision) return prepared;
  if (decision.decision === 'rejected') {
    throw new UserError('rejected_by_user', `The call to "${call._tool}" was rejected${decision.reason ? `: ${decision.reason}` : '.'}`);
  }
  if (decision.decision === 'edited') {
    const edited = withFixedMeta({ ...decision.call, _tool: call._tool }, tool, prepared.activityName === undefined);
    checkParams(edited, tool, true);
    return { ...prepared, call: edited };
  }
  return prepared;
}

/** What an Activity receives besides `(call, tool, context)`: its run, its call, the signal that stops it, and the way to start a child (DEL-20). */
function activityEnvironment(scope: CallScope, entry: BatchEntry, call: Call, signal: AbortSignal): ActivityEnvironment {
  return {
    runChild: (child) => runChild(scope, { callId: entry.id, instance: call._instance }, child),
    checkChild: (description) => checkChild(scope, description),
    addRemoteUsage: (usage) => {
      scope.addDescendantUsage(usage);
      // What an agent elsewhere used counts against the tree's budget too (LOOP-13, DEL-37).
      scope.tree.meter?.add(usage, usage.costUsd);
    },
    endRun: (error) => {
      scope.ended ??= error;
    },
    run: scope.run,
    confirm: scope.options.confirm,
    callId: entry.id,
    toolName: call._tool,
    instance: call._instance,
    signal: handedOutSignal(signal),
    trace: scope.trace,
    ...(scope.runtime.activityTimeoutMs === undefined ? {} : { activityTimeoutMs: scope.runtime.activityTimeoutMs }),
  };
}

/** Runs the call's Activity on the context its scopes allow, and returns its result as JSON data. */
async function runActivity(scope: CallScope, entry: BatchEntry, prepared: PreparedCall, activityName: string): Promise<unknown> {
  const { call, tool, registration } = prepared;
  if (!registration) {
    const available = scope.runtime.activities.list();
    throw new ActivityError('activity_error', `No Activity named "${activityName}" is registered (registered: ${available.join(', ') || 'none'}).`, {
      toolName: call._tool,
      available,
    });
  }
  const { activity } = registration;
  if (!scope.run.trusted && !registration.runsUntrusted) {
    throw new DelegateError(
      'delegate_forbidden',
      `"${scope.run.location}" is not trusted to run the local Activity "${activityName}"; trust its host with --trust-host to allow it.`,
    );
  }
  // An Activity whose calls name their context gets exactly that (DEL-25); any other, its tool's `_scopes`.
  const scopes = registration.scopesOf ? registration.scopesOf(call).map(unsigiled) : metaValue(call, tool, '_scopes');
  const context = scopeContext(scope.store, Array.isArray(scopes) ? (scopes as string[]) : undefined, call._instance);
  // An Activity that ignores its signal must not hold a cancelled run: the run stops waiting. One
  // that owns its cancellation (the Delegation Activity, whose child shares the signal and ends
  // first) is awaited, so every child's run.failed is traced before its parent's; its child is
  // bounded by its own steps and model timeouts, not by the activity timeout (TOOL-24).
  const timeout = registration.ownsCancellation ? undefined : activityTimeout(scope);
  const environment = activityEnvironment(scope, entry, call, timeout?.controller.signal ?? scope.signal);
  const pending = { activity: activityName, call: entry.id, tool: call._tool, run: scope.run.id };
  let result: unknown;
  try {
    const running = Promise.resolve().then(() => activity(call, tool, context, environment));
    // A call whose Activity can never finish ends its run (ERR-8), as an Activity may (LOOP-18).
    const stalled = (error: ProtocolError) => {
      scope.ended ??= error;
    };
    result = await (registration.ownsCancellation ? running : scope.runtime.pendingActivities.wait(running, pending, scope.signal, stalled, timeout));
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    if (scope.signal.aborted) throw cancelled(error);
    throw new ActivityError(
      'activity_error',
      `The Activity "${activityName}" failed: ${error instanceof Error ? error.message : String(error)}`,
      { toolName: call._tool },
      { cause: error },
    );
  } finally {
    timeout?.release();
  }
  return jsonResult(result, activityName, call._tool);
}

/**
 * The activity timeout of a call (TOOL-24), when the runtime has one: the signal handed to its
 * Activity follows the run's and is aborted too when the time runs out.
 */
function activityTimeout(scope: CallScope): (ActivityTimeout & { release(): void }) | undefined {
  const ms = scope.runtime.activityTimeoutMs;
  if (ms === undefined) return undefined;
  const controller = new AbortController();
  const release = onAbort(scope.signal, () => controller.abort(scope.signal.reason));
  return { ms, controller, release };
}

/**
 * The Activity's result as plain JSON data, made once here so that nothing later (the context, the
 * trace, the CLI's output) meets a value JSON cannot hold; `undefined` stays "no result" (TOOL-20).
 */
function jsonResult(result: unknown, activityName: string, toolName: string): unknown {
  try {
    // No deeper than a document may nest (DOC-10).
    return toJsonData(result, { maxDepth: MAX_NESTING_DEPTH });
  } catch (error) {
    if (!(error instanceof NotJsonError)) throw error;
    if (error.tooDeep) {
      throw new ActivityError('activity_error', `The Activity "${activityName}" returned a value that is not usable: ${nestingMessage(error.pointer)}`, {
        toolName,
        pointer: error.pointer,
      });
    }
    const where = error.pointer === '' ? 'it is' : `${error.pointer} is`;
    throw new ActivityError('activity_error', `The Activity "${activityName}" failed: the result is not JSON: ${where} ${error.problem}.`, {
      toolName,
      pointer: error.pointer,
    });
  }
}

/** Writes a result: a returned message is appended as is; other values go to `_outputPath`. */
function writeResult(scope: CallScope, entry: BatchEntry, { call }: PreparedCall, result: unknown): void {
  const instance = call._instance;
  if (isMessageResult(scope.runtime, result)) {
    const problems: string[] = [];
    const message = normalizeMessage(result as Record<string, unknown>, '', scope.runtime.handlers, (pointer, text) =>
      problems.push(`${pointer || '/'} ${text}`),
    );
    if (!message) throw new ActivityError('activity_error', `The Activity of "${call._tool}" returned an invalid message: ${problems.join(' ')}`);
    // A message written for an instance stays with that instance, and never reaches another one.
    if (instance !== undefined && message._instance !== undefined && message._instance !== instance) {
      throw new ActivityError(
        'activity_error',
        `The Activity of "${call._tool}" on instance "${instance}" returned a message for instance "${String(message._instance)}".`,
      );
    }
    if (isDataMessage(message, scope.runtime.handlers) && instance !== undefined && message._instance === undefined) message._instance = instance;
    scope.store.append(message);
    return;
  }
  if (result === undefined || typeof call._outputPath !== 'string') return;
  const target = parseOutputPath(call._outputPath);
  if (!target) throw new CallError('invalid_params', `Expected _outputPath to be a †reference or an expression of them, got "${call._outputPath}".`);
  // The record keeps the call as written (act 008), so a plan holding it knows it is done (PLAN-10).
  const options = { method: call._outputMethod ?? 'set', call: entry.call, ...(instance === undefined ? {} : { instance }) };
  if (target.op === 'or') {
    // An alternative outcome is picked by a result naming exactly one of the alternatives.
    const chosen = chooseAlternative(target.targets, result);
    scope.store.append(makeWrite(chosen.target, chosen.value, options));
    return;
  }
  for (const reference of target.targets) scope.store.append(makeWrite(reference, result, options));
}

function chooseAlternative(targets: Reference[], result: unknown): { target: Reference; value: unknown } {
  if (isJsonObject(result)) {
    const keys = Object.keys(result);
    if (keys.length === 1) {
      const key = keys[0] as string;
      const match = targets.find((target) => target.text === key || target.text === `†${key}` || target.text.slice(1) === key);
      if (match) return { target: match, value: (result as Record<string, unknown>)[key] };
    }
  }
  return { target: targets[0] as Reference, value: result };
}
