/** The figures of one command's run tree: the fold `delegate-run report` and the viewer make of a trace, fed with a resumed journal's earlier events and then the session's (spec/journal.md JOURNAL-12). */
import { BATCH_ITEMS } from '../files/batched-log.js';
import type { TraceEventBase } from '../protocol/trace-events.js';
import type { Tracer } from '../protocol/trace.js';
import { type CostReport, costReport } from './cost-report.js';
import { CostTree } from './cost-tree.js';

/**
 * The cost tree of one command's run tree (CLI-6, CLI-17): the same fold `delegate-run report` and
 * the viewer make of a trace, fed with the events before this process (a resumed journal's, JOURNAL-12)
 * and then the session's. It takes the session's events in passes of up to BATCH_ITEMS, not each
 * amid the run's own work (events do not change once emitted, TRACE-23).
 */
export class TreeCosts {
  private readonly tree = new CostTree();
  private pending: TraceEventBase[] = [];

  /** @param before events of the same tree written before this process: a resumed journal's. */
  constructor(before: readonly TraceEventBase[] = []) {
    for (const event of before) this.tree.apply(event);
  }

  /** Takes one event of the session. */
  add(event: TraceEventBase): void {
    if (this.pending.push(event) >= BATCH_ITEMS) this.settle();
  }

  /** Takes the session's events as `tracer` emits them; returns the unsubscribe. */
  follow(tracer: Tracer): () => void {
    return tracer.subscribe((event) => this.add(event));
  }

  /** The report of every event taken so far, each answer priced as its run priced it. */
  report(tierOf?: (model: string) => string | undefined): CostReport {
    this.settle();
    return costReport(this.tree, { price: (answer) => answer.costUsd, ...(tierOf ? { tierOf } : {}) });
  }

  private settle(): void {
    for (const event of this.pending) this.tree.apply(event);
    this.pending = [];
  }
}
