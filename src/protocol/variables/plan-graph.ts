/** Dependencies between calls: which call reads what another writes, and cycles among them. */
import type { Call } from '../types.js';
import { ScopedReferenceIndex } from './reference-index.js';
import { findReferences, parseOutputPath, type Reference } from './references.js';

// Calls are never mutated once scheduled, so their parsed references are cached by identity.
const readCache = new WeakMap<Call, Reference[]>();
const writeCache = new WeakMap<Call, Reference[]>();

/** A call as an instance runs it: a template's call (no `_instance`) targeted at `instance` (PLAN-12). */
export function forInstance(call: Call, instance: string | undefined): Call {
  return instance === undefined || call._instance !== undefined ? call : { ...call, _instance: instance };
}

/** The references a call reads (its parameters and latent `_output`; `_outputPath` excluded). */
export function readsOf(call: Call): Reference[] {
  let reads = readCache.get(call);
  if (!reads) {
    const { _outputPath: _path, ...parameters } = call;
    reads = findReferences(parameters);
    readCache.set(call, reads);
  }
  return reads;
}

/** The references a call declares it writes (every target of its `_outputPath`). */
export function writesOf(call: Call): Reference[] {
  let writes = writeCache.get(call);
  if (!writes) {
    writes = typeof call._outputPath === 'string' ? (parseOutputPath(call._outputPath)?.targets ?? []) : [];
    writeCache.set(call, writes);
  }
  return writes;
}

/** True when two references touch the same data: same kind and one path is a prefix of the other. */
export function overlaps(a: Reference, b: Reference): boolean {
  if (a.kind !== b.kind) return false;
  const length = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) if (String(a.segments[i]) !== String(b.segments[i])) return false;
  return true;
}

/** True when `reader` reads something `writer` declares it writes (on the same instance). */
export function dependsOn(reader: Call, writer: Call): boolean {
  if (reader === writer) return false;
  if ((reader._instance ?? null) !== (writer._instance ?? null) && writer._instance !== undefined) return false;
  const writes = writesOf(writer);
  if (writes.length === 0) return false;
  return readsOf(reader).some((read) => writes.some((write) => overlaps(read, write)));
}

/** The scope of a call's writes: a writer without `_instance` blocks readers on every instance (VAR-17). */
export function writeScopeOf(call: Call): unknown {
  return call._instance;
}

/** The scope of a call's reads: its `_instance` (none and `null` alike, as `dependsOn` compares them). */
export function readScopeOf(call: Call): unknown {
  return call._instance ?? null;
}

/** Registers a call under every reference it writes. */
export function addWriter<T>(writers: ScopedReferenceIndex<T>, call: Call, item: T): void {
  for (const write of writesOf(call)) writers.add(write, writeScopeOf(call), item);
}

/**
 * Visits the writers (registered with `addWriter`) that `reader` depends on, the reader itself
 * included when it writes what it reads: once for each of its reads a writer's writes overlap.
 */
export function forEachWriterOf<T>(writers: ScopedReferenceIndex<T>, reader: Call, visit: (writer: T) => void): void {
  for (const read of readsOf(reader)) {
    writers.forEachIn(read, undefined, visit);
    writers.forEachIn(read, readScopeOf(reader), visit);
  }
}

/**
 * For each call, the indices of the other calls it waits for, ascending. The writes are indexed by
 * path, so this takes time proportional to the calls, their references and the dependencies found.
 */
export function dependencyGraph(calls: Call[]): number[][] {
  const writers = new ScopedReferenceIndex<number>();
  for (const [index, call] of calls.entries()) addWriter(writers, call, index);
  return calls.map((reader, index) => {
    const found = new Set<number>();
    forEachWriterOf(writers, reader, (writer) => {
      if (writer !== index) found.add(writer);
    });
    return [...found].sort((a, b) => a - b);
  });
}

/** The graph a CycleSearch walks: nodes in order, each node's edges in order, and which nodes still count. */
export interface SearchGraph<N> {
  readonly nodes: readonly N[];
  edges(node: N): readonly N[];
  alive(node: N): boolean;
}

interface Frame<N> {
  node: N;
  edges: readonly N[];
  next: number;
}

/**
 * A depth-first search for cycles, from the first node in order and along edges in order, that
 * can be resumed after the caller removes nodes (marks them not alive): it then finds the cycle a
 * fresh search of what is left would find, without walking again what it has walked. The graph
 * may lose nodes and edges between calls of `next`, never gain any; without a stack of its own it
 * handles graphs of any depth.
 */
export class CycleSearch<N> {
  private readonly state = new Map<N, 'open' | 'done'>();
  private readonly positions = new Map<N, number>();
  private readonly stack: Frame<N>[] = [];
  private root = 0;

  constructor(private readonly graph: SearchGraph<N>) {}

  /** The nodes of one cycle, each waiting for the next (the last for the first), or undefined when none is left. */
  next(): N[] | undefined {
    const { graph, state, stack } = this;
    // Removed nodes leave the top of the stack: a node on it waits for the one above, so it can
    // only be removed after that one.
    while (stack.length > 0 && !graph.alive(stack[stack.length - 1]!.node)) this.pop(false);
    for (;;) {
      const frame = stack[stack.length - 1];
      if (!frame) {
        const nodes = graph.nodes;
        while (this.root < nodes.length && (!graph.alive(nodes[this.root]!) || state.has(nodes[this.root]!))) this.root += 1;
        if (this.root >= nodes.length) return undefined;
        this.push(nodes[this.root]!);
        continue;
      }
      if (frame.next >= frame.edges.length) {
        this.pop(true);
        continue;
      }
      const next = frame.edges[frame.next]!;
      const seen = state.get(next);
      if (!graph.alive(next) || seen === 'done') {
        frame.next += 1;
      } else if (seen === 'open') {
        const cycle = stack.slice(this.positions.get(next)).map((member) => member.node);
        if (cycle.every((member) => graph.alive(member))) return cycle;
        // A member removed below the top breaks the resumption: search afresh.
        this.reset();
      } else {
        this.push(next);
      }
    }
  }

  private push(node: N): void {
    this.state.set(node, 'open');
    this.positions.set(node, this.stack.length);
    this.stack.push({ node, edges: this.graph.edges(node), next: 0 });
  }

  private pop(done: boolean): void {
    const frame = this.stack.pop()!;
    this.positions.delete(frame.node);
    if (done) this.state.set(frame.node, 'done');
    else this.state.delete(frame.node);
  }

  private reset(): void {
    this.state.clear();
    this.positions.clear();
    this.stack.length = 0;
    this.root = 0;
  }
}

/** Returns the indices of one cycle among the calls (in dependency order), or undefined if there is none. */
export function findCycle(calls: Call[]): number[] | undefined {
  const graph = dependencyGraph(calls);
  return new CycleSearch<number>({ nodes: calls.map((_, index) => index), edges: (node) => graph[node] ?? [], alive: () => true }).next();
}

/** A call's label for messages: its `_id`, else `#<index> <tool>`. */
export function callLabel(call: Call, index: number): string {
  return typeof call._id === 'string' ? `${call._id} (${call._tool})` : `#${index} (${call._tool})`;
}

/** A sentence naming the calls of a cycle (by their labels, in cycle order) and what they wait for. */
export function cycleSentence(labels: readonly string[]): string {
  const parts = labels.map((label, position) => `${label} waits for ${labels[(position + 1) % labels.length]}`);
  return `calls form a cycle: ${parts.join(', ')}`;
}

/** A sentence naming the calls of a cycle and what they wait for. */
export function describeCycle(calls: Call[], cycle: number[]): string {
  return cycleSentence(cycle.map((index) => callLabel(calls[index] as Call, index)));
}
