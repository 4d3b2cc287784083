/** Running a batch of calls in a run's scope, and handing the batch's errors to the model (LOOP-5). */
import { type BatchEntry, CallBatch } from './call-batch.js';
import { executeCall, type PreparedCall, prepareCall, recordFailure } from './execute-call.js';
import type { CallScope } from './call-scope.js';
import type { ErrorMessage } from '../types.js';

/**
 * A batch whose calls are prepared, executed and failed in this run's scope. A call that was done
 * before the batch began is not executed again: it finishes at once, its earlier result standing
 * (PLAN-10); two equal calls of one batch are still two calls.
 */
export function batchFor(scope: CallScope): CallBatch<PreparedCall | undefined> {
  const batch = scope.ledger.openBatch();
  return new CallBatch<PreparedCall | undefined>({
    // A call done before is prepared as nothing to run.
    prepare: (entry) => (scope.ledger.doneBefore(entry.call, batch) ? { status: 'ready', call: undefined } : prepareCall(scope, entry)),
    execute: async (entry, prepared) => {
      if (prepared === undefined) {
        scope.trace.emit('call.skipped', { call: entry.id, tool: entry.call._tool, reason: 'done' });
        return;
      }
      const failure = await executeCall(scope, entry, prepared);
      scope.ledger.finished(entry.call, batch, failure?.toJSON());
    },
    fail: (entry, error) => {
      recordFailure(scope, entry, entry.call, error);
      scope.ledger.finished(entry.call, batch, error.toJSON());
    },
    watch: (listener) => scope.store.watch(listener),
  });
}

/** Runs calls as one batch (a plan, or a step's calls) and waits for all of them. */
export async function runBatch(scope: CallScope, entries: BatchEntry[]): Promise<void> {
  const batch = batchFor(scope);
  batch.addAll(entries);
  batch.close();
  await batch.settled();
}

/** Appends the step's errors to the context, where the model sees them next step (LOOP-5). */
export function flushErrors(scope: CallScope): void {
  const errors: ErrorMessage[] = scope.errors.splice(0);
  for (const error of errors) scope.store.append(error);
}
