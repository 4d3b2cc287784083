/** The scheduler of one step's (or one plan's) calls: runs every unblocked call in parallel, in dependency order. */
import { CallError, type ProtocolError } from './errors.js';
import { dependsOn, describeCycle, findCycle } from './plan-graph.js';
import type { Call } from './types.js';
import type { Reference } from './variables.js';

/** A call waiting in a batch. */
export interface BatchEntry {
  /** The call's id in the trace (`_id`, else `<step>.<index>`). */
  id: string;
  call: Call;
}

/** What the batch asks of its owner. */
export interface BatchHooks {
  /**
   * Resolves the call's references. Returns the call with references replaced, `blocked` with the
   * references still missing, or throws a ProtocolError for a call that can never run.
   */
  prepare(entry: BatchEntry): { status: 'ready'; call: Call } | { status: 'blocked'; missing: Reference[] };
  /** Executes a prepared call; must not throw (failures are the owner's to record). */
  execute(entry: BatchEntry, call: Call): Promise<void>;
  /** Records a call that failed before it could run. */
  fail(entry: BatchEntry, error: ProtocolError): void;
}

/**
 * Calls are added (possibly while the model is still streaming), then the batch is closed. A call
 * starts as soon as no unfinished call of the batch declares a write it reads and its references
 * resolve. When the batch is closed and nothing runs, calls still blocked fail: members of a
 * dependency cycle with a message naming the cycle, the rest with `unresolved_reference`.
 */
export class CallBatch {
  private readonly pending: BatchEntry[] = [];
  private readonly running = new Set<BatchEntry>();
  private closed = false;
  private settle!: () => void;
  private readonly done = new Promise<void>((resolve) => {
    this.settle = resolve;
  });

  constructor(private readonly hooks: BatchHooks) {}

  /**
   * Adds a call; it starts as soon as it can. Calls added in the same tick (a plan, or an answer
   * delivered whole) are scheduled together, so a call waits for every call of that set that
   * writes what it reads, whatever their order; calls streamed in later ticks start on arrival.
   */
  add(entry: BatchEntry): void {
    if (this.closed) throw new Error('A closed batch takes no more calls.');
    this.pending.push(entry);
    this.schedule();
  }

  /** Adds calls known all at once. */
  addAll(entries: readonly BatchEntry[]): void {
    for (const entry of entries) this.add(entry);
  }

  /** No more calls will come. */
  close(): void {
    this.closed = true;
    this.schedule();
  }

  private scheduled = false;

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Resolves when every call has completed or failed and the batch is closed. */
  settled(): Promise<void> {
    return this.done;
  }

  private waitsForOthers(entry: BatchEntry): boolean {
    const unfinished = [...this.pending, ...this.running];
    return unfinished.some((other) => other !== entry && dependsOn(entry.call, other.call));
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

  /** Nothing runs and nothing can start: fail cycles first, then calls blocked on missing data. */
  private failStuck(): void {
    const calls = this.pending.map((entry) => entry.call);
    const cycle = findCycle(calls);
    if (cycle) {
      const message = `This call can never run: ${describeCycle(calls, cycle)}.`;
      const members = cycle.map((index) => this.pending[index] as BatchEntry);
      const ids = members.map((entry) => entry.id);
      for (const entry of members) {
        this.remove(entry);
        this.hooks.fail(entry, new CallError('unresolved_reference', message, { cycle: ids }));
      }
      return;
    }
    // Fail the calls that wait on no other pending call; their dependants get their turn after.
    // Chosen before any is removed: a dependant freed by a failure here may now run.
    const stuck = this.pending.filter((entry) => !this.waitsForOthers(entry));
    for (const entry of stuck) {
      let missing: Reference[] = [];
      try {
        const prepared = this.hooks.prepare(entry);
        if (prepared.status === 'blocked') missing = prepared.missing;
      } catch {
        // prepare reports its own failure on the next pass.
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
