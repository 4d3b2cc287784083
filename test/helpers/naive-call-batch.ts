/**
 * The reference scheduler for CallBatch's properties: the first, naive implementation, which
 * compares every pending call with every unfinished one on every pass and prepares every blocked
 * call again whenever anything finishes. Same contract (CALL-6, VAR-17, PLAN-4), cubic time.
 * Calls of a cycle are labelled by their position in the batch, as CallBatch labels them.
 */
import type { BatchEntry, BatchHooks } from '../../src/protocol/calls/call-batch.js';
import { CallError, type ProtocolError } from '../../src/protocol/errors.js';
import { callLabel, cycleSentence, dependsOn } from '../../src/protocol/variables/plan-graph.js';
import type { Call } from '../../src/protocol/types.js';
import type { Reference } from '../../src/protocol/variables/references.js';

/** The cycle the naive depth-first search finds first among `calls`, as indices. */
export function naiveFindCycle(calls: Call[]): number[] | undefined {
  const graph = calls.map((reader) => calls.flatMap((writer, index) => (dependsOn(reader, writer) ? [index] : [])));
  const state: ('new' | 'open' | 'done')[] = calls.map(() => 'new');
  const stack: number[] = [];
  const visit = (node: number): number[] | undefined => {
    state[node] = 'open';
    stack.push(node);
    for (const next of graph[node] ?? []) {
      if (state[next] === 'open') return stack.slice(stack.indexOf(next));
      if (state[next] === 'new') {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state[node] = 'done';
    return undefined;
  };
  for (let node = 0; node < calls.length; node++) {
    if (state[node] === 'new') {
      const found = visit(node);
      if (found) return found;
    }
  }
  return undefined;
}

/** The naive CallBatch: same hooks (`watch` is not needed: it retries everything), the methods the properties use. */
export class NaiveCallBatch {
  private readonly pending: BatchEntry[] = [];
  private readonly running = new Set<BatchEntry>();
  private readonly orders = new Map<BatchEntry, number>();
  private closed = false;
  private scheduled: Promise<void> | undefined;
  private settle!: () => void;
  private readonly done = new Promise<void>((resolve) => {
    this.settle = resolve;
  });

  constructor(private readonly hooks: Omit<BatchHooks, 'watch'>) {}

  add(entry: BatchEntry): void {
    if (this.closed) throw new Error('A closed batch takes no more calls.');
    this.orders.set(entry, this.orders.size);
    this.pending.push(entry);
    this.pumpSoon();
  }

  close(): void {
    this.closed = true;
    this.pumpSoon();
  }

  /** Resolves once every call has completed or failed after close. */
  readonly settled = (): Promise<void> => this.done;

  /** Pumps once at the end of this tick, so calls added in one tick are scheduled together. */
  private pumpSoon(): void {
    this.scheduled ??= Promise.resolve().then(() => {
      this.scheduled = undefined;
      this.pump();
    });
  }

  private waitsForOthers(entry: BatchEntry): boolean {
    return [...this.pending, ...this.running].some((other) => other !== entry && dependsOn(entry.call, other.call));
  }

  private pump(): void {
    let progressed = true;
    while (progressed) {
      progressed = false;
      for (const entry of [...this.pending]) {
        if (this.waitsForOthers(entry)) continue;
        let prepared: ReturnType<BatchHooks['prepare']>;
        try {
          prepared = this.hooks.prepare(entry);
        } catch (error) {
          this.remove(entry);
          this.hooks.fail(entry, error as ProtocolError);
          progressed = true;
          continue;
        }
        if (prepared.status === 'blocked') continue;
        this.remove(entry);
        this.start(entry, prepared.call);
        progressed = true;
      }
      if (!progressed && this.closed && this.running.size === 0 && this.pending.length > 0) {
        this.failStuck();
        progressed = true;
      }
    }
    if (this.closed && this.running.size === 0 && this.pending.length === 0) this.settle();
  }

  private failStuck(): void {
    const calls = this.pending.map((entry) => entry.call);
    const cycle = naiveFindCycle(calls);
    if (cycle) {
      const members = cycle.map((index) => this.pending[index] as BatchEntry);
      const labels = members.map((entry) => callLabel(entry.call, this.orders.get(entry) ?? -1));
      const message = `This call can never run: ${cycleSentence(labels)}.`;
      const ids = members.map((entry) => entry.id);
      for (const entry of members) {
        this.remove(entry);
        this.hooks.fail(entry, new CallError('unresolved_reference', message, { cycle: ids }));
      }
      return;
    }
    const stuck = this.pending.filter((entry) => !this.waitsForOthers(entry));
    for (const entry of stuck) {
      let missing: Reference[] = [];
      try {
        const prepared = this.hooks.prepare(entry);
        if (prepared.status === 'blocked') missing = prepared.missing;
      } catch (error) {
        // As CallBatch: a call that can no longer be prepared fails with the error prepare threw.
        this.remove(entry);
        this.hooks.fail(entry, error as ProtocolError);
        continue;
      }
      this.remove(entry);
      const names = missing.map((reference) => reference.text).join(', ');
      this.hooks.fail(
        entry,
        new CallError('unresolved_reference', `The call's references never resolved by the end of the step: ${names || 'unknown'}.`, {
          missing: missing.map((reference) => reference.text),
        }),
      );
    }
  }

  private remove(entry: BatchEntry): void {
    const index = this.pending.indexOf(entry);
    if (index >= 0) this.pending.splice(index, 1);
  }

  private start(entry: BatchEntry, call: Call): void {
    this.running.add(entry);
    void this.hooks.execute(entry, call).finally(() => {
      this.running.delete(entry);
      this.pump();
    });
  }
}
