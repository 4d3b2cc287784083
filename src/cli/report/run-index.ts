/** Runs by id, nested by parent as a trace reveals them: what the progress tree and the cost tree both build on. */

/** A run as an index keeps it: its id and its children's ids. */
export interface IndexedRun {
  run: string;
  /** Child run ids, in the order they were attached. */
  children: string[];
}

/**
 * Runs by id. A run is made the first time any event names it and attached under its parent when
 * the parent is known, else kept as a root; so a child attaches whichever comes first of its own
 * events and its parent's delegation.
 */
export class RunIndex<T extends IndexedRun> {
  private readonly byId = new Map<string, T>();
  private readonly rootIds: string[] = [];

  /** The run with this id, made by `create` and attached the first time. */
  ensure(run: string, parent: string | null, create: () => T): T {
    const existing = this.byId.get(run);
    if (existing) return existing;
    const node = create();
    this.byId.set(run, node);
    const parentNode = parent === null ? undefined : this.byId.get(parent);
    if (parentNode) parentNode.children.push(run);
    else this.rootIds.push(run);
    return node;
  }

  /** The run with this id. */
  get(run: string): T | undefined {
    return this.byId.get(run);
  }

  /** Every run, in the order they were made. */
  all(): IterableIterator<T> {
    return this.byId.values();
  }

  /** The runs without a known parent (normally one: the top run). */
  get roots(): T[] {
    return this.rootIds.map((id) => this.byId.get(id) as T);
  }

  /** A run's children, in the order they were attached. */
  childrenOf(node: T): T[] {
    return node.children.map((id) => this.byId.get(id) as T);
  }

  /** Every run, depth first, parents before their children. */
  depthFirst(): T[] {
    const ordered: T[] = [];
    const visit = (node: T) => {
      ordered.push(node);
      for (const child of this.childrenOf(node)) visit(child);
    };
    for (const root of this.roots) visit(root);
    return ordered;
  }
}
