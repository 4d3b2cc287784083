/**
 * What became of each call of a run (PLAN-10, PLAN-11): done, failed or not yet run, known from the
 * context's records (`_call`, act 008), its error messages and its plans' `_status`, and from the
 * calls the run itself finishes. A done call is never executed again.
 */
import type { ErrorJson } from '../errors.js';
import { canonicalJson } from '../json.js';
import type { CallStatus } from '../messages/handlers.js';
import { forInstance } from '../variables/plan-graph.js';
import type { Call, Message, PlanStatusEntry } from '../types.js';

// Calls are never changed once made, so their keys are cached by identity (as plan-graph.ts caches their references).
const keys = new WeakMap<Call, string>();

/**
 * The identity of a call (PLAN-10): its JSON with keys sorted at every depth, leaving out
 * `_reasoningForCall` (why it is made, not what it does). Two calls with equal keys are the same
 * action: the same tool, parameters (as written, references included), output path, instance and `_id`.
 */
export function callKey(call: Call): string {
  let key = keys.get(call);
  if (key === undefined) {
    const { _reasoningForCall: _why, ...action } = call;
    key = canonicalJson(action);
    keys.set(call, key);
  }
  return key;
}

/** A status entry and the batch it came from: -1 for what the context held when the run began. */
interface Entry {
  status: CallStatus;
  batch: number;
}

/** The run's knowledge of which calls are done or failed, by identity. */
export class CallLedger {
  private readonly entries = new Map<string, Entry>();
  private batches = 0;

  /** Learns from the messages the context holds: written records, error messages and plan statuses. */
  learn(messages: readonly Message[]): void {
    for (const message of messages) this.learnFrom(message, -1);
  }

  /** Learns from one message appended by the run (a write of a call's result, an error). */
  learnFrom(message: Message, batch = this.batches): void {
    if (message.type !== 'error' && isCall(message._call)) {
      this.entries.set(callKey(message._call), { status: { status: 'done' }, batch });
      return;
    }
    if (message.type === 'error') {
      const failed = isCall(message._call) ? message._call : withoutId(message.call);
      // The context is read in order, so the newest word on a call wins: a failure after a write of
      // the same call (its failure branch, VAR-19) leaves it failed; a success after a failure, done.
      if (failed) this.entries.set(callKey(failed), { status: { status: 'failed', error: message.error as ErrorJson }, batch });
      return;
    }
    if (message.type === 'plan' && Array.isArray(message._status) && Array.isArray(message.calls)) {
      for (const [index, entry] of (message._status as PlanStatusEntry[]).entries()) {
        const call = (message.calls as Call[])[index];
        if (call) this.learnPlanStatus(call, entry, batch);
      }
    }
  }

  private learnPlanStatus(call: Call, entry: PlanStatusEntry, batch: number): void {
    const statuses = typeof entry === 'string' ? [[undefined, entry] as const] : Object.entries(entry);
    for (const [instance, status] of statuses) {
      const key = callKey(forInstance(call, instance));
      if (status === 'done') this.entries.set(key, { status: { status: 'done' }, batch });
      // A failure already known keeps its error; the plan only says that the call failed.
      else if (status === 'failed' && this.entries.get(key)?.status.status !== 'failed') this.entries.set(key, { status: { status: 'failed' }, batch });
    }
  }

  /** Opens a batch: calls done before this moment are skipped in it; returns its number. */
  openBatch(): number {
    this.batches += 1;
    return this.batches;
  }

  /** Records that a call of `batch` finished: done, or failed with `error`. */
  finished(call: Call, batch: number, error?: ErrorJson): void {
    const key = callKey(call);
    if (error === undefined) this.entries.set(key, { status: { status: 'done' }, batch });
    else if (this.entries.get(key)?.status.status !== 'done') this.entries.set(key, { status: { status: 'failed', error }, batch });
  }

  /** What became of a call, if anything yet. */
  status(call: Call): CallStatus | undefined {
    return this.entries.get(callKey(call))?.status;
  }

  /** True when the call was done before `batch` began, so it must not run again in it (PLAN-10). */
  doneBefore(call: Call, batch: number): boolean {
    // A run that knows of no call yet (a fresh one) need not work out this call's key before it starts it.
    if (this.entries.size === 0) return false;
    const entry = this.entries.get(callKey(call));
    return entry !== undefined && entry.status.status === 'done' && entry.batch < batch;
  }
}

/**
 * The call an error message written without `_call` (an older context) names: its `call`, less the
 * `id` the runtime put beside the call's own fields (MSG-8).
 */
function withoutId(call: unknown): Call | undefined {
  if (!isCall(call)) return undefined;
  const { id: _id, ...written } = call;
  return written as Call;
}

/** True for a call-shaped value: an object naming its tool in `_tool`. */
export function isCall(value: unknown): value is Call {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Call)._tool === 'string';
}
