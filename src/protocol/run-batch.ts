/** Running a batch of calls in a run's scope, and handing the batch's errors to the model (LOOP-5). */
import { CallBatch, type BatchEntry } from './call-batch.js';
import { executeCall, prepareCall, recordFailure, type CallScope } from './execute-call.js';
import type { ErrorMessage } from './types.js';

/** A batch whose calls are prepared, executed and failed in this run's scope. */
export function batchFor(scope: CallScope): CallBatch {
  return new CallBatch({
    prepare: (entry) => prepareCall(scope, entry),
    execute: (entry, call) => executeCall(scope, entry, call),
    fail: (entry, error) => recordFailure(scope, entry, entry.call, error),
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
