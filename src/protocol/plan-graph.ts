/** Dependencies between calls: which call reads what another writes, and cycles among them. */
import type { Call } from './types.js';
import { findReferences, parseOutputPath, type Reference } from './variables.js';

// Calls are never mutated once scheduled, so their parsed references are cached by identity:
// the scheduler compares every pair of pending calls each time one finishes.
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

/** True when `reader` reads something `writer` declares it writes (on the same instance). */
export function dependsOn(reader: Call, writer: Call): boolean {
  if (reader === writer) return false;
  if ((reader._instance ?? null) !== (writer._instance ?? null) && writer._instance !== undefined) return false;
  const writes = writesOf(writer);
  if (writes.length === 0) return false;
  return readsOf(reader).some((read) => writes.some((write) => overlaps(read, write)));
}

/** For each call, the indices of the other calls it waits for. */
export function dependencyGraph(calls: Call[]): number[][] {
  return calls.map((reader) => calls.flatMap((writer, index) => (dependsOn(reader, writer) ? [index] : [])));
}

/** Returns the indices of one cycle among the calls (in dependency order), or undefined if there is none. */
export function findCycle(calls: Call[]): number[] | undefined {
  const graph = dependencyGraph(calls);
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
