/** The scheduler of one step's (or one plan's) calls: runs every unblocked call in parallel, in dependency order. */
import { CallError, type ProtocolError } from './errors.js';
import { CycleSearch, describeCycle, instancesMeet, readsOf, ReferenceIndex, writesOf } from './plan-graph.js';
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
  /**
   * What was written to the context since the last time this was asked (the first answer may be
   * everything so far). With it, a call blocked on missing data is prepared again only when
   * something it misses may have been written; without it, every blocked call is prepared again
   * whenever a call ends.
   */
  written?(): Iterable<Reference>;
}

/** A call of the batch and what it waits for. */
interface Slot {
  entry: BatchEntry;
  /** The order calls were added in: calls that become ready together start in this order. */
  order: number;
  state: 'pending' | 'blocked' | 'running' | 'ended';
  /** Unfinished calls of the batch that declare a write this call reads. */
  waitsFor: Set<Slot>;
  /** Pending calls that wait for this one. */
  dependants: Set<Slot>;
  /** While blocked: the references that were missing. */
  missing: Reference[];
}

/**
 * Calls are added (possibly while the model is still streaming), then the batch is closed. A call
 * starts as soon as no unfinished call of the batch declares a write it reads and its references
 * resolve. When the batch is closed and nothing runs, calls still blocked fail: members of a
 * dependency cycle with a message naming the cycle, the rest with `unresolved_reference`.
 *
 * Reads and writes are indexed once per call, and a call that ends wakes only the calls that
 * waited for it (or, for calls blocked on missing data, only those missing what was written), so
 * a batch costs time linear in its calls plus their dependencies (PLAN-9).
 */
export class CallBatch {
  private readonly slots: Slot[] = [];
  /** Unfinished calls, by what they declare they write. */
  private readonly writers = new ReferenceIndex<Slot>();
  /** Calls not started yet, by what they read. */
  private readonly readers = new ReferenceIndex<Slot>();
  /** Blocked calls, by the references they miss. */
  private readonly blockedOn = new ReferenceIndex<Slot>();
  private readonly blocked = new Set<Slot>();
  /** Calls that wait for nothing and are to be prepared at the next pump. */
  private ready: Slot[] = [];
  private unfinished = 0;
  private running = 0;
  private nextOrder = 0;
  private closed = false;
  private cycles: CycleSearch<Slot> | undefined;
  /**
   * How many times the batch looked at another call (an index hit, a dependant woken, a call
   * prepared): the measure of its work that PLAN-9 bounds by calls plus dependencies. For tests
   * and benchmarks.
   */
  examined = 0;
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
    const slot: Slot = { entry, order: this.nextOrder++, state: 'pending', waitsFor: new Set(), dependants: new Set(), missing: [] };
    const call = entry.call;
    for (const read of readsOf(call)) {
      for (const writer of this.writers.overlapping(read)) {
        this.examined++;
        if (instancesMeet(call._instance, writer.entry.call._instance)) this.link(slot, writer);
      }
    }
    for (const write of writesOf(call)) {
      for (const reader of this.readers.overlapping(write)) {
        this.examined++;
        if (reader !== slot && instancesMeet(reader.entry.call._instance, call._instance)) this.link(reader, slot);
      }
    }
    for (const read of readsOf(call)) this.readers.add(read, slot);
    for (const write of writesOf(call)) this.writers.add(write, slot);
    this.slots.push(slot);
    this.unfinished++;
    if (slot.waitsFor.size === 0) this.ready.push(slot);
    this.schedule();
  }

  /** Adds each of `entries` in order. */
  addAll(entries: readonly BatchEntry[]): void {
    for (const entry of entries) this.add(entry);
  }

  /** No more calls will come. */
  close(): void {
    this.closed = true;
    this.schedule();
  }

  /** Resolves when every call has completed or failed and the batch is closed. */
  settled(): Promise<void> {
    return this.done;
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

  /** `reader` waits for `writer` until the writer ends. */
  private link(reader: Slot, writer: Slot): void {
    if (reader === writer || reader.waitsFor.has(writer)) return;
    reader.waitsFor.add(writer);
    writer.dependants.add(reader);
    // A call blocked on missing data now has a writer to wait for: it is prepared again when that writer ends.
    if (reader.state === 'blocked') this.unblock(reader);
  }

  private unblock(slot: Slot): void {
    for (const reference of slot.missing) this.blockedOn.remove(reference, slot);
    this.blocked.delete(slot);
    slot.missing = [];
    slot.state = 'pending';
  }

  private pump(): void {
    for (;;) {
      while (this.ready.length > 0) {
        const batch = this.ready.sort((a, b) => a.order - b.order);
        this.ready = [];
        for (const slot of batch) this.prepare(slot);
      }
      if (!this.closed || this.running > 0 || this.unfinished === 0) break;
      this.failStuck();
    }
    if (this.closed && this.unfinished === 0) this.settle();
  }

  private prepare(slot: Slot): void {
    if (slot.state !== 'pending' || slot.waitsFor.size > 0) return;
    let prepared: ReturnType<BatchHooks['prepare']>;
    this.examined++;
    try {
      prepared = this.hooks.prepare(slot.entry);
    } catch (error) {
      this.end(slot);
      this.hooks.fail(slot.entry, error as ProtocolError);
      return;
    }
    if (prepared.status === 'blocked') {
      slot.state = 'blocked';
      slot.missing = prepared.missing;
      this.blocked.add(slot);
      for (const reference of prepared.missing) this.blockedOn.add(reference, slot);
      return;
    }
    this.start(slot, prepared.call);
  }

  private start(slot: Slot, call: Call): void {
    slot.state = 'running';
    this.running++;
    for (const read of readsOf(slot.entry.call)) this.readers.remove(read, slot);
    void this.hooks.execute(slot.entry, call).finally(() => {
      this.running--;
      this.end(slot);
      this.wakeBlocked();
      this.pump();
    });
  }

  /** A call ran or failed: the calls that waited for it stop waiting. */
  private end(slot: Slot): void {
    if (slot.state === 'blocked') this.unblock(slot);
    if (slot.state === 'pending') for (const read of readsOf(slot.entry.call)) this.readers.remove(read, slot);
    slot.state = 'ended';
    this.unfinished--;
    for (const write of writesOf(slot.entry.call)) this.writers.remove(write, slot);
    for (const writer of slot.waitsFor) writer.dependants.delete(slot);
    slot.waitsFor.clear();
    for (const dependant of slot.dependants) {
      this.examined++;
      dependant.waitsFor.delete(slot);
      if (dependant.waitsFor.size === 0 && dependant.state === 'pending') this.ready.push(dependant);
    }
    slot.dependants.clear();
  }

  /** Blocked calls that may now find what they missed are prepared again. */
  private wakeBlocked(): void {
    if (this.blocked.size === 0) {
      this.hooks.written?.();
      return;
    }
    const woken = new Set<Slot>();
    if (this.hooks.written) {
      for (const reference of this.hooks.written())
        for (const slot of this.blockedOn.overlapping(reference)) {
          this.examined++;
          woken.add(slot);
        }
    } else {
      for (const slot of this.blocked) {
        this.examined++;
        woken.add(slot);
      }
    }
    for (const slot of woken) {
      this.unblock(slot);
      this.ready.push(slot);
    }
  }

  /** Nothing runs and nothing can start: fail cycles first, then calls blocked on missing data. */
  private failStuck(): void {
    this.cycles ??= new CycleSearch(
      this.slots,
      (slot) => [...slot.waitsFor].sort((a, b) => a.order - b.order),
      (slot) => slot.state !== 'ended',
    );
    const cycle = this.cycles.next();
    if (cycle) {
      // Calls are named by their position in the batch (or their `_id`).
      const message = `This call can never run: ${describeCycle(
        this.slots.map((slot) => slot.entry.call),
        cycle.map((slot) => slot.order),
      )}.`;
      const ids = cycle.map((slot) => slot.entry.id);
      for (const slot of cycle) {
        this.end(slot);
        this.hooks.fail(slot.entry, new CallError('unresolved_reference', message, { cycle: ids }));
      }
      return;
    }
    // Fail the calls that wait on no other pending call; their dependants get their turn after.
    // Chosen before any is removed: a dependant freed by a failure here may now run.
    const stuck = [...this.blocked].sort((a, b) => a.order - b.order);
    for (const slot of stuck) {
      let missing = slot.missing;
      try {
        const prepared = this.hooks.prepare(slot.entry);
        if (prepared.status === 'blocked') missing = prepared.missing;
      } catch {
        // The call is failed below for what it missed when it was last prepared.
      }
      this.end(slot);
      const names = missing.map((reference) => reference.text).join(', ');
      this.hooks.fail(
        slot.entry,
        new CallError('unresolved_reference', `The call's references never resolved by the end of the step: ${names || 'unknown'}.`, {
          missing: missing.map((reference) => reference.text),
        }),
      );
    }
  }
}
