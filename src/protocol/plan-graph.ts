/**
 * Dependencies between calls: which call reads what another writes, and cycles among them. Every
 * question here is answered through a ReferenceIndex, so it costs time linear in the calls, their
 * references and the dependencies found, never in the square of the calls (PLAN-9).
 */
import type { Call } from './types.js';
import { findReferences, parseOutputPath, type Reference } from './variables.js';

// Calls are never mutated once scheduled, so their parsed references are cached by identity.
const readCache = new WeakMap<Call, Reference[]>();
const writeCache = new WeakMap<Call, Reference[]>();

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

/** True when a call on `readerInstance` may read what a call on `writerInstance` writes (DATA-6). */
export function instancesMeet(readerInstance: unknown, writerInstance: unknown): boolean {
  return writerInstance === undefined || (readerInstance ?? null) === writerInstance;
}

/** True when `reader` reads something `writer` declares it writes (on the same instance). */
export function dependsOn(reader: Call, writer: Call): boolean {
  if (reader === writer) return false;
  if (!instancesMeet(reader._instance, writer._instance)) return false;
  const writes = writesOf(writer);
  if (writes.length === 0) return false;
  return readsOf(reader).some((read) => writes.some((write) => overlaps(read, write)));
}

interface IndexNode<T> {
  items: Set<T>;
  children: Map<string, IndexNode<T>>;
  parent: IndexNode<T> | undefined;
  key: string;
}

/**
 * Items filed under references, answering "which items sit under a reference that overlaps this
 * one" by walking the reference's path once (items above it) and the subtree below it (items
 * under it): the cost is the path's length plus the items returned. Empty branches are pruned, so
 * the subtree holds only live items.
 */
export class ReferenceIndex<T> {
  private readonly kinds = new Map<string, IndexNode<T>>();

  /** Files `item` under `reference`. */
  add(reference: Reference, item: T): void {
    let node: IndexNode<T> | undefined = this.kinds.get(reference.kind);
    if (!node) {
      node = { items: new Set(), children: new Map(), parent: undefined, key: reference.kind };
      this.kinds.set(reference.kind, node);
    }
    for (const segment of reference.segments) {
      const key = String(segment);
      let child: IndexNode<T> | undefined = node.children.get(key);
      if (!child) {
        child = { items: new Set(), children: new Map(), parent: node, key };
        node.children.set(key, child);
      }
      node = child;
    }
    node.items.add(item);
  }

  /** Removes `item` from under `reference` (nothing happens when it is not there). */
  remove(reference: Reference, item: T): void {
    let node = this.kinds.get(reference.kind);
    for (const segment of reference.segments) node = node?.children.get(String(segment));
    if (!node) return;
    node.items.delete(item);
    while (node && node.items.size === 0 && node.children.size === 0) {
      const parent: IndexNode<T> | undefined = node.parent;
      if (parent) parent.children.delete(node.key);
      else this.kinds.delete(node.key);
      node = parent;
    }
  }

  /** Every item filed under a reference that overlaps `reference` (an item may come more than once). */
  *overlapping(reference: Reference): Generator<T> {
    let node = this.kinds.get(reference.kind);
    if (!node) return;
    yield* node.items;
    for (const segment of reference.segments) {
      node = node.children.get(String(segment));
      if (!node) return;
      yield* node.items;
    }
    const below = [...node.children.values()];
    while (below.length > 0) {
      const next = below.pop() as IndexNode<T>;
      yield* next.items;
      for (const child of next.children.values()) below.push(child);
    }
  }
}

/** For each call, the indices of the other calls it waits for, ascending. */
export function dependencyGraph(calls: Call[]): number[][] {
  const writers = new ReferenceIndex<number>();
  for (const [index, call] of calls.entries()) for (const write of writesOf(call)) writers.add(write, index);
  return calls.map((reader, readerIndex) => {
    const waits = new Set<number>();
    for (const read of readsOf(reader)) {
      for (const writer of writers.overlapping(read)) {
        if (writer !== readerIndex && instancesMeet(reader._instance, (calls[writer] as Call)._instance)) waits.add(writer);
      }
    }
    return [...waits].sort((a, b) => a - b);
  });
}

/**
 * Depth-first search for cycles in a graph given by `edges(node)` (the nodes a node waits for).
 * Nodes proven to reach no cycle stay proven across calls of `next()`, so finding every cycle of
 * a graph that only shrinks between calls costs linear time overall; the search is iterative, so a
 * chain of any length cannot overflow the stack.
 */
export class CycleSearch<N> {
  private readonly state = new Map<N, 'open' | 'done'>();
  private cursor = 0;

  constructor(
    private readonly nodes: readonly N[],
    private readonly edges: (node: N) => readonly N[],
    private readonly alive: (node: N) => boolean = () => true,
  ) {}

  /** The next cycle among the live nodes, in dependency order (each member waits for the next), or undefined. */
  next(): N[] | undefined {
    for (; this.cursor < this.nodes.length; this.cursor++) {
      const root = this.nodes[this.cursor] as N;
      if (!this.alive(root) || this.state.has(root)) continue;
      const cycle = this.search(root);
      if (cycle) return cycle;
    }
    return undefined;
  }

  private search(root: N): N[] | undefined {
    const stack: Array<{ node: N; next: readonly N[]; at: number }> = [{ node: root, next: this.edges(root), at: 0 }];
    this.state.set(root, 'open');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as { node: N; next: readonly N[]; at: number };
      if (frame.at >= frame.next.length) {
        this.state.set(frame.node, 'done');
        stack.pop();
        continue;
      }
      const next = frame.next[frame.at++] as N;
      if (!this.alive(next)) continue;
      const seen = this.state.get(next);
      if (seen === 'open') {
        const start = stack.findIndex((entry) => entry.node === next);
        const cycle = stack.slice(start).map((entry) => entry.node);
        // The open nodes are searched again next time: the cycle's members will be gone by then.
        for (const entry of stack) this.state.delete(entry.node);
        return cycle;
      }
      if (seen === undefined) {
        this.state.set(next, 'open');
        stack.push({ node: next, next: this.edges(next), at: 0 });
      }
    }
    return undefined;
  }
}

/** Returns the indices of one cycle among the calls (in dependency order), or undefined if there is none. */
export function findCycle(calls: Call[]): number[] | undefined {
  const graph = dependencyGraph(calls);
  return new CycleSearch(
    calls.map((_, index) => index),
    (node) => graph[node] ?? [],
  ).next();
}

/** A call's label for messages: its `_id`, else `#<index> <tool>`. */
export function callLabel(call: Call, index: number): string {
  return typeof call._id === 'string' ? `${call._id} (${call._tool})` : `#${index} (${call._tool})`;
}

/** A sentence naming the calls of a cycle and what they wait for. */
export function describeCycle(calls: Call[], cycle: number[]): string {
  const parts = cycle.map((index, position) => {
    const next = cycle[(position + 1) % cycle.length] as number;
    return `${callLabel(calls[index] as Call, index)} waits for ${callLabel(calls[next] as Call, next)}`;
  });
  return `calls form a cycle: ${parts.join(', ')}`;
}
