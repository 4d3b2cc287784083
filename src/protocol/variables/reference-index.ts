/** An index of references by path: which registered references overlap a given one (VAR-17), in time proportional to the answer. */
import type { PathSegment, Reference } from './references.js';

/** The part of a reference the index looks at: its kind and path. */
/** A reference's kind and path, which the index reads and never changes. */
export interface ReferencePath {
  kind: Reference['kind'];
  segments: readonly PathSegment[];
}

/** One path step of the trie; the first level below the root is the kind. */
class TrieNode<T> {
  /** Items registered at exactly this path, with how many times each was. */
  readonly items = new Map<T, number>();
  readonly children = new Map<string, TrieNode<T>>();
  /** Registrations at this node and below, so that empty branches are pruned. */
  size = 0;
}

/** The trie keys of a reference: its kind, then each segment as a string (`0` and `"0"` address the same slot). */
function keysOf(reference: ReferencePath): string[] {
  return [reference.kind, ...reference.segments.map(String)];
}

/**
 * Items (calls, say) registered under references. Two references overlap when they have the same
 * kind and one path is a prefix of the other; `forEachOverlapping` visits exactly the items
 * registered under a reference that overlaps the one asked about, walking only the path of that
 * reference and the branches below it that hold items.
 */
export class ReferenceIndex<T> {
  private readonly root = new TrieNode<T>();

  /** Registers `item` under `reference` (registering it twice needs two deletes). */
  add(reference: ReferencePath, item: T): void {
    let node = this.root;
    node.size += 1;
    for (const key of keysOf(reference)) {
      let child = node.children.get(key);
      if (!child) {
        child = new TrieNode<T>();
        node.children.set(key, child);
      }
      child.size += 1;
      node = child;
    }
    node.items.set(item, (node.items.get(item) ?? 0) + 1);
  }

  /** Removes one registration of `item` under `reference`; nothing happens when there is none. */
  delete(reference: ReferencePath, item: T): void {
    const keys = keysOf(reference);
    const path = [this.root];
    for (const key of keys) {
      const child = path[path.length - 1]!.children.get(key);
      if (!child) return;
      path.push(child);
    }
    const last = path[path.length - 1]!;
    const count = last.items.get(item);
    if (count === undefined) return;
    if (count === 1) last.items.delete(item);
    else last.items.set(item, count - 1);
    for (let depth = path.length - 1; depth >= 0; depth -= 1) {
      const node = path[depth]!;
      node.size -= 1;
      if (depth > 0 && node.size === 0) path[depth - 1]!.children.delete(keys[depth - 1]!);
    }
  }

  /**
   * Visits every item registered under a reference overlapping `reference`: at a prefix of its
   * path (itself included), then anywhere below it. An item registered under several overlapping
   * references is visited once for each.
   */
  forEachOverlapping(reference: ReferencePath, visit: (item: T) => void): void {
    let node = this.root;
    for (const key of keysOf(reference)) {
      const child = node.children.get(key);
      if (!child) return;
      node = child;
      for (const item of node.items.keys()) visit(item);
    }
    const below = [...node.children.values()];
    for (let next = below.pop(); next !== undefined; next = below.pop()) {
      for (const item of next.items.keys()) visit(item);
      below.push(...next.children.values());
    }
  }
}

/**
 * A ReferenceIndex whose items belong to scopes (instances, VAR-17 and DATA-3): queries look at
 * one scope, or at all of them. Scopes are compared as values, like `_instance`s.
 */
export class ScopedReferenceIndex<T> {
  private readonly all = new ReferenceIndex<T>();
  private readonly scopes = new Map<unknown, ReferenceIndex<T>>();

  /** Registers `item` under `reference` in `scope`. */
  add(reference: ReferencePath, scope: unknown, item: T): void {
    this.all.add(reference, item);
    let index = this.scopes.get(scope);
    if (!index) {
      index = new ReferenceIndex<T>();
      this.scopes.set(scope, index);
    }
    index.add(reference, item);
  }

  /** Removes one registration of `item` under `reference` in `scope`. */
  delete(reference: ReferencePath, scope: unknown, item: T): void {
    this.all.delete(reference, item);
    this.scopes.get(scope)?.delete(reference, item);
  }

  /** Visits the items of `scope` registered under a reference overlapping `reference`. */
  forEachIn(reference: ReferencePath, scope: unknown, visit: (item: T) => void): void {
    this.scopes.get(scope)?.forEachOverlapping(reference, visit);
  }

  /** Visits the items of every scope registered under a reference overlapping `reference`. */
  forEachInAny(reference: ReferencePath, visit: (item: T) => void): void {
    this.all.forEachOverlapping(reference, visit);
  }
}
