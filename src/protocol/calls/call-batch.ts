/** The scheduler of one step's (or one plan's) calls: runs every unblocked call in parallel, in dependency order. */
import { CallError, type ProtocolError, toProtocolError } from '../errors.js';
import { addWriter, callLabel, CycleSearch, cycleSentence, forEachWriterOf, readScopeOf, readsOf, writeScopeOf, writesOf } from '../variables/plan-graph.js';
import { ScopedReferenceIndex } from '../variables/reference-index.js';
import type { Call } from '../types.js';
import type { DataRecord } from '../variables/data-records.js';
import type { Reference } from '../variables/references.js';

/** A call waiting in a batch. */
export interface BatchEntry {
  /** The call's id in the trace (`_id`, else `<step>.<index>`). */
  id: string;
  call: Call;
}

/** What the batch asks of its owner, whose `prepare` makes of a call what its `execute` takes (the call, by default). */
export interface BatchHooks<Prepared = Call> {
  /**
   * Resolves the call's references. Returns the call with references replaced, `blocked` with the
   * references still missing, or throws a ProtocolError for a call that can never run. Its answer
   * for a blocked call may change only when data is written, and every write is reported to `watch`.
   */
  prepare(entry: BatchEntry): { status: 'ready'; call: Prepared } | { status: 'blocked'; missing: Reference[] };
  /** Executes a prepared call; must not throw (failures are the owner's to record). */
  execute(entry: BatchEntry, call: Prepared): Promise<void>;
  /** Records a call that failed before it could run. */
  fail(entry: BatchEntry, error: ProtocolError): void;
  /** Calls `listener` with every data record written from now on (until the returned function is called). */
  watch(listener: (record: DataRecord) => void): () => void;
}

/** The work a batch has done, which PLAN-9 bounds: calls prepared, and candidates its dependency lookups and cycle search examined. */
export interface BatchWork {
  prepared: number;
  examined: number;
}

/** A call of the batch and what the scheduler knows about it. */
interface Node {
  readonly entry: BatchEntry;
  /** Its position in the batch: the order calls were added. */
  readonly order: number;
  state: 'arrived' | 'pending' | 'running' | 'finished';
  reads: Reference[];
  writes: Reference[];
  /** The unfinished calls of the batch that write what this one reads. */
  readonly waitsOn: Set<Node>;
  /** The pending calls that wait for this one. */
  readonly dependants: Set<Node>;
  /** What was missing when it was last prepared, while it waits for a write to any of it. */
  missing: Reference[] | undefined;
  queued: boolean;
}

/**
 * Calls are added (possibly while the model is still streaming), then the batch is closed. A call
 * starts as soon as no unfinished call of the batch declares a write it reads and its references
 * resolve. When the batch is closed and nothing runs, calls still blocked fail: members of a
 * dependency cycle with a message naming the cycle, the rest with `unresolved_reference` (or with
 * the error `prepare` throws, when it can no longer prepare one).
 *
 * Work is linear in the calls plus their dependencies (PLAN-9): reads and writes are indexed once
 * per call; a finished call wakes only the calls that waited for it, and a write only the blocked
 * calls that miss something it wrote.
 */
export class CallBatch<Prepared = Call> {
  /** Every call ever added, in order. */
  private readonly nodes: Node[] = [];
  /** Calls added since the scheduler last ran, linked together when it does. */
  private arrived: Node[] = [];
  /** Unfinished calls by what they write. */
  private readonly writers = new ScopedReferenceIndex<Node>();
  /** Pending calls by what they read. */
  private readonly readers = new ScopedReferenceIndex<Node>();
  /** Blocked calls by the references they miss. */
  private readonly blocked = new ScopedReferenceIndex<Node>();
  /** Pending calls that were prepared, found blocked, and wait for no other call. */
  private readonly idle = new Set<Node>();
  /** Calls to prepare in this pass, by order; `later` holds those for the next pass. */
  private readonly queue: Node[] = [];
  private later: Node[] = [];
  /** The order of the call being prepared, or -1 between passes. */
  private cursor = -1;
  private pending = 0;
  private running = 0;
  private closed = false;
  private scheduled = false;
  private search: CycleSearch<Node> | undefined;
  private readonly unwatch: () => void;
  private settle!: () => void;
  private readonly done = new Promise<void>((resolve) => {
    this.settle = resolve;
  });
  /** Counts of the work done so far. */
  readonly work: BatchWork = { prepared: 0, examined: 0 };

  constructor(private readonly hooks: BatchHooks<Prepared>) {
    this.unwatch = hooks.watch((record) => this.wake(record));
  }

  /**
   * Adds a call; it starts as soon as it can. Calls added in the same tick (a plan, or an answer
   * delivered whole) are scheduled together, so a call waits for every call of that set that
   * writes what it reads, whatever their order; calls streamed in later ticks start on arrival.
   */
  add(entry: BatchEntry): void {
    if (this.closed) throw new Error('A closed batch takes no more calls.');
    const node: Node = {
      entry,
      order: this.nodes.length,
      state: 'arrived',
      reads: [],
      writes: [],
      waitsOn: new Set(),
      dependants: new Set(),
      missing: undefined,
      queued: false,
    };
    this.nodes.push(node);
    this.arrived.push(node);
    this.pending += 1;
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

  /** Resolves when every call has completed or failed and the batch is closed. */
  settled(): Promise<void> {
    return this.done;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.arrived.length > 0) this.link();
    this.drain();
    while (this.closed && this.running === 0 && this.pending > 0) {
      this.failStuck();
      this.drain();
    }
    if (this.closed && this.running === 0 && this.pending === 0) {
      this.unwatch();
      this.settle();
    }
  }

  /** Indexes the calls that arrived together, then gives each the writers it waits for, among them and the unfinished ones. */
  private link(): void {
    const arrived = this.arrived;
    this.arrived = [];
    const first = arrived[0]!.order;
    for (const node of arrived) {
      node.state = 'pending';
      node.reads = readsOf(node.entry.call);
      node.writes = writesOf(node.entry.call);
      addWriter(this.writers, node.entry.call, node);
      for (const read of node.reads) this.readers.add(read, readScopeOf(node.entry.call), node);
    }
    for (const node of arrived) {
      forEachWriterOf(this.writers, node.entry.call, (writer) => {
        this.work.examined += 1;
        if (writer !== node) this.wait(node, writer);
      });
      // Pending calls that arrived before wait for this one too (those arriving with it found it above).
      const scope = writeScopeOf(node.entry.call);
      for (const write of node.writes) {
        const visit = (reader: Node) => {
          this.work.examined += 1;
          if (reader.order < first) this.wait(reader, node);
        };
        if (scope === undefined) this.readers.forEachInAny(write, visit);
        else this.readers.forEachIn(write, scope, visit);
      }
    }
    for (const node of arrived) if (node.waitsOn.size === 0) this.enqueue(node);
  }

  /** Makes `reader` wait for `writer`. */
  private wait(reader: Node, writer: Node): void {
    if (reader.waitsOn.has(writer)) return;
    reader.waitsOn.add(writer);
    writer.dependants.add(reader);
    // A blocked call now waiting for a writer is prepared again when the writer is done.
    this.unpark(reader);
  }

  /** Queues a call to be prepared: in this pass when it comes after the current one, else in the next. */
  private enqueue(node: Node): void {
    if (node.queued) return;
    node.queued = true;
    if (node.order > this.cursor) heapPush(this.queue, node);
    else this.later.push(node);
  }

  /** Prepares queued calls in passes over the batch order, as long as any is queued. */
  private drain(): void {
    for (;;) {
      const node = heapPop(this.queue);
      if (node) {
        node.queued = false;
        this.cursor = node.order;
        if (node.state === 'pending' && node.waitsOn.size === 0) this.prepare(node);
        continue;
      }
      this.cursor = -1;
      if (this.later.length === 0) return;
      for (const next of this.later) heapPush(this.queue, next);
      this.later = [];
    }
  }

  private prepare(node: Node): void {
    this.work.prepared += 1;
    let prepared: ReturnType<BatchHooks<Prepared>['prepare']>;
    try {
      prepared = this.hooks.prepare(node.entry);
    } catch (error) {
      this.finish(node);
      this.hooks.fail(node.entry, toProtocolError(error));
      return;
    }
    if (prepared.status === 'blocked') {
      this.park(node, prepared.missing);
      return;
    }
    this.start(node, prepared.call);
  }

  /** A blocked call waits for a write to what it misses. */
  private park(node: Node, missing: Reference[]): void {
    node.missing = missing;
    for (const reference of missing) this.blocked.add(reference, readScopeOf(node.entry.call), node);
    this.idle.add(node);
  }

  private unpark(node: Node): void {
    if (node.missing === undefined) return;
    for (const reference of node.missing) this.blocked.delete(reference, readScopeOf(node.entry.call), node);
    node.missing = undefined;
    this.idle.delete(node);
  }

  /** A record was written: the blocked calls missing something at, above or below its path are prepared again. */
  private wake(record: DataRecord): void {
    const woken = new Set<Node>();
    const reference = { kind: record.kind, segments: record.path };
    const visit = (node: Node) => {
      this.work.examined += 1;
      woken.add(node);
    };
    // A global record is seen by every instance; an instance's only by calls on it (DATA-3).
    if (record.instance === undefined) this.blocked.forEachInAny(reference, visit);
    else this.blocked.forEachIn(reference, record.instance, visit);
    for (const node of woken) {
      this.unpark(node);
      this.enqueue(node);
    }
  }

  private start(node: Node, call: Prepared): void {
    node.state = 'running';
    for (const read of node.reads) this.readers.delete(read, readScopeOf(node.entry.call), node);
    this.pending -= 1;
    this.running += 1;
    void this.hooks.execute(node.entry, call).finally(() => {
      this.running -= 1;
      this.finish(node);
      this.pump();
    });
  }

  /** The call completed or failed: it leaves every index, and the calls that waited only for it are queued. */
  private finish(node: Node): void {
    if (node.state === 'finished') return;
    if (node.state === 'pending') {
      for (const read of node.reads) this.readers.delete(read, readScopeOf(node.entry.call), node);
      this.unpark(node);
      this.pending -= 1;
    }
    node.state = 'finished';
    for (const write of node.writes) this.writers.delete(write, writeScopeOf(node.entry.call), node);
    for (const writer of node.waitsOn) writer.dependants.delete(node);
    node.waitsOn.clear();
    for (const reader of node.dependants) {
      reader.waitsOn.delete(node);
      if (reader.waitsOn.size === 0) this.enqueue(reader);
    }
    node.dependants.clear();
  }

  /** Nothing runs and nothing can start: fail cycles first, then calls blocked on missing data. */
  private failStuck(): void {
    // After close no call arrives, so the search can resume where it stopped (PLAN-9).
    this.search ??= new CycleSearch<Node>({
      nodes: this.nodes,
      edges: (node) => {
        this.work.examined += node.waitsOn.size;
        return [...node.waitsOn].sort(byOrder);
      },
      alive: (node) => node.state === 'pending',
    });
    const cycle = this.search.next();
    if (cycle) {
      const message = `This call can never run: ${cycleSentence(cycle.map((node) => callLabel(node.entry.call, node.order)))}.`;
      const ids = cycle.map((node) => node.entry.id);
      for (const node of cycle) {
        this.finish(node);
        this.hooks.fail(node.entry, new CallError('unresolved_reference', message, { cycle: ids }));
      }
      return;
    }
    // Fail the calls that wait on no other pending call; their dependants get their turn after.
    // Chosen before any is removed: a dependant freed by a failure here may now run.
    const stuck = [...this.idle].sort(byOrder);
    for (const node of stuck) {
      let missing: Reference[] = [];
      this.work.prepared += 1;
      try {
        const prepared = this.hooks.prepare(node.entry);
        if (prepared.status === 'blocked') missing = prepared.missing;
      } catch (error) {
        // A call that can no longer be prepared (its tool gone from the context) fails with that reason, not as unresolved.
        this.finish(node);
        this.hooks.fail(node.entry, toProtocolError(error));
        continue;
      }
      this.finish(node);
      const names = missing.map((reference) => reference.text).join(', ');
      this.hooks.fail(
        node.entry,
        new CallError('unresolved_reference', `The call's references never resolved by the end of the step: ${names || 'unknown'}.`, {
          missing: missing.map((reference) => reference.text),
        }),
      );
    }
  }
}

function byOrder(a: Node, b: Node): number {
  return a.order - b.order;
}

/** Pushes onto a binary min-heap of calls by order. */
function heapPush(heap: Node[], node: Node): void {
  heap.push(node);
  let at = heap.length - 1;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (heap[parent]!.order <= node.order) break;
    heap[at] = heap[parent]!;
    at = parent;
  }
  heap[at] = node;
}

/** Takes the call of lowest order from a binary min-heap. */
function heapPop(heap: Node[]): Node | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  let at = 0;
  for (;;) {
    const left = 2 * at + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && heap[right]!.order < heap[left]!.order ? right : left;
    if (heap[child]!.order >= last.order) break;
    heap[at] = heap[child]!;
    at = child;
  }
  heap[at] = last;
  return top;
}
