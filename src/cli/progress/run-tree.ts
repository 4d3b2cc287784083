/** The run tree: a pure model of a run and its delegations, built from trace events, for the progress views and the summary. */
import { addCost, addUsage, tokensOf, type UsageSummary, zeroUsage } from '../../protocol/usage.js';
import type { TraceEvent } from '../../protocol/trace/trace.js';
import type { TraceEventOf } from '../../protocol/trace/events.js';
import type { Usage } from '../../protocol/usage.js';
import { callLabel } from './call-label.js';
import { RunIndex } from '../report/run-index.js';
import { foldEvent, type TraceHandlers } from '../report/trace-fold.js';
import type { TraceRun } from '../../viewer/trace-run.js';

/** Where a run is: still going, finished with an output, failed, or cancelled by the user. */
export type RunStatus = 'running' | 'done' | 'failed' | 'cancelled';

/** The calls a run has started, by where they are. */
export interface CallCounts {
  running: number;
  done: number;
  failed: number;
}

/** One run: the top run or a delegation's child run. */
export interface RunNode extends TraceRun {
  /** The resolved reference of the Request document. */
  request?: string;
  /** The parent's call that delegated to this run. */
  call?: string;
  /** That call as a label, its tool and a summary of its parameters (`worker · {"topic":"tides"}`, CLI-6). */
  callLabel?: string;
  /** Model steps begun: 0 before the first model request, 1 while the first is asked, and so on. */
  step: number;
  status: RunStatus;
  /** Why the run failed or was cancelled. */
  error?: { code: string; message: string };
  /** Tokens of this run's own model answers (not its children's). */
  tokens: Usage;
  /** Cost of this run's own answers; `null` when some answer had no known price. */
  costUsd: number | null;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt?: number;
  calls: CallCounts;
  /** Child run ids, in the order their delegations started. */
  children: string[];
  /** Own plus descendants' usage as reported when the run ended; absent while running or after a failure. */
  usageTotal?: UsageSummary;
  /** The model call being retried (`model.retry`), until its answer arrives or the run ends. */
  retry?: RetryState;
}

/** A model call that failed transiently and is being retried (spec/trace.md `model.retry`). */
export interface RetryState {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  reason: string;
  /** Epoch milliseconds when the next attempt starts. */
  retryAt: number;
}

/**
 * The tree of runs a trace describes. Feed it every event with `apply`; it never reads the clock,
 * so the same events always give the same tree. A child attaches under its parent run whichever
 * comes first of the parent's `delegate.started` and the child's `run.started`.
 */
export class RunTree {
  private readonly index = new RunIndex<RunNode>();
  /** Calls started and not yet settled, per run (call ids are unique within a run only). */
  private readonly openCalls = new Map<string, Set<string>>();
  /** The labels of calls started and not yet settled, by run and call: a delegation takes its call's (CLI-6). */
  private readonly openLabels = new Map<string, string>();
  private lastTime = 0;
  /** The last `ts` read and its time: events of one millisecond share it, and a fan-out's events come many to a millisecond. */
  private lastStamp = '';
  private lastStampAt = Number.NaN;

  /** The time of the event being applied, in epoch milliseconds. */
  private at = 0;
  /** What each event the tree reads changes; each returns whether anything shown changed. */
  private readonly handlers: TraceHandlers<boolean> = {
    // A resumed run is shown as a started one (JOURNAL-6).
    'run.resumed': (event) => this.started(event),
    'run.started': (event) => this.started(event),
    'delegate.started': (event) => this.delegated(event),
    'model.request': (event) => {
      const node = this.ensure(event.run, event.parent, event.depth, this.at);
      node.step = Math.max(node.step, event.step + 1);
      return true;
    },
    'model.retry': (event) => {
      const node = this.ensure(event.run, event.parent, event.depth, this.at);
      node.retry = { attempt: event.attempt, reason: event.reason, retryAt: this.at + event.waitMs };
      return true;
    },
    'model.response': (event) => this.answered(event),
    'call.started': (event) => this.called(event, callLabel(event.tool, event.params)),
    'call.completed': (event) => this.called(event),
    'call.failed': (event) => this.called(event),
    'delegate.completed': (event) => this.delegateEnded(event),
    'delegate.failed': (event) => this.delegateEnded(event),
    'run.completed': (event) => this.completed(event),
    'run.failed': (event) => {
      this.fail(this.ensure(event.run, event.parent, event.depth, this.at), event, this.at);
      return true;
    },
  };

  /** Updates the tree with one event; returns whether anything shown changed. */
  apply(event: TraceEvent): boolean {
    if (event.ts !== this.lastStamp) {
      this.lastStamp = event.ts;
      this.lastStampAt = Date.parse(event.ts);
    }
    this.at = Number.isNaN(this.lastStampAt) ? this.lastTime : this.lastStampAt;
    this.lastTime = Math.max(this.lastTime, this.at);
    return foldEvent(event, this.handlers, false);
  }

  private started(event: TraceEventOf<'run.started'> | TraceEventOf<'run.resumed'>): boolean {
    const node = this.ensure(event.run, event.parent, event.depth, this.at);
    node.request = event.request;
    node.name = event.name;
    node.model = event.model ?? node.model;
    node.startedAt = this.at;
    return true;
  }

  private delegated(event: TraceEventOf<'delegate.started'>): boolean {
    const child = this.ensure(event.child, event.run, event.depth + 1, this.at);
    child.request ??= event.delegate;
    child.name = event.name;
    child.model = event.model ?? child.model;
    child.call = event.call;
    const label = this.openLabels.get(`${event.run}\u0000${event.call}`);
    if (label !== undefined) child.callLabel = label;
    return true;
  }

  private answered(event: TraceEventOf<'model.response'>): boolean {
    const node = this.ensure(event.run, event.parent, event.depth, this.at);
    delete node.retry;
    node.tokens = addUsage(node.tokens, event.usage);
    node.costUsd = addCost(node.costUsd, event.costUsd);
    node.model = event.model;
    return true;
  }

  /** A call started (with its label, CLI-6) or settled: the run's counts of calls follow. */
  private called(event: TraceEventOf<'call.started' | 'call.completed' | 'call.failed'>, label?: string): boolean {
    const node = this.ensure(event.run, event.parent, event.depth, this.at);
    const open = this.openCalls.get(node.run) ?? new Set<string>();
    this.openCalls.set(node.run, open);
    const key = `${node.run}\u0000${event.call}`;
    if (label !== undefined) {
      open.add(event.call);
      this.openLabels.set(key, label);
    } else {
      open.delete(event.call);
      this.openLabels.delete(key);
      node.calls[event.event === 'call.completed' ? 'done' : 'failed']++;
    }
    node.calls.running = open.size;
    return true;
  }

  private delegateEnded(event: TraceEventOf<'delegate.completed'> | TraceEventOf<'delegate.failed'>): boolean {
    const child = event.child === null ? undefined : this.index.get(event.child);
    if (!child) return false;
    if (event.event === 'delegate.failed') this.fail(child, event, this.at);
    else {
      child.usageTotal = event.usage;
      this.end(child, 'done', this.at);
    }
    return true;
  }

  private completed(event: TraceEventOf<'run.completed'>): boolean {
    const node = this.ensure(event.run, event.parent, event.depth, this.at);
    // The run's own report is authoritative; the live counts were built from the same answers.
    node.tokens = tokensOf(event.usage);
    node.costUsd = event.usage.costUsd;
    node.step = Math.max(node.step, event.usage.steps);
    node.usageTotal = event.usageTotal;
    this.end(node, 'done', this.at);
    return true;
  }

  /** The runs without a known parent (normally one: the top run). */
  get roots(): RunNode[] {
    return this.index.roots;
  }

  /** The run with this id. */
  get(run: string): RunNode | undefined {
    return this.index.get(run);
  }

  /** A run's children, in the order their delegations started. */
  childrenOf(node: RunNode): RunNode[] {
    return this.index.childrenOf(node);
  }

  /** Every run, depth first, parents before their children. */
  nodes(): RunNode[] {
    return this.index.depthFirst();
  }

  /** True while some run has not ended. */
  get running(): boolean {
    for (const node of this.index.all()) if (node.status === 'running') return true;
    return false;
  }

  /** The latest event time seen, in epoch milliseconds. */
  get lastEventAt(): number {
    return this.lastTime;
  }

  /** Marks every run still running as cancelled at `at` (a cancelled top run leaves no events behind for them). */
  cancelRunning(at: number): void {
    for (const node of this.index.all()) {
      if (node.status === 'running') this.end(node, 'cancelled', at);
    }
  }

  private ensure(run: string, parent: string | null, depth: number, at: number): RunNode {
    return this.index.ensure(run, parent, () => ({
      run,
      parent,
      depth,
      name: run,
      model: null,
      step: 0,
      status: 'running',
      tokens: zeroUsage(),
      costUsd: 0,
      startedAt: at,
      calls: { running: 0, done: 0, failed: 0 },
      children: [],
    }));
  }

  /** Ends a run that failed, or was cancelled, with the failure's code and message. */
  private fail(node: RunNode, failure: { code: string; message: string }, at: number): void {
    this.end(node, failure.code === 'cancelled_by_user' ? 'cancelled' : 'failed', at, { code: failure.code, message: failure.message });
  }

  private end(node: RunNode, status: RunStatus, at: number, error?: { code: string; message: string }): void {
    if (node.status !== 'running') return;
    delete node.retry;
    node.status = status;
    node.endedAt = at;
    if (error) node.error = error;
  }
}

/** How long a run has taken: until it ended, or until `now` while it runs. */
export function elapsedMs(node: RunNode, now: number): number {
  return Math.max(0, (node.endedAt ?? now) - node.startedAt);
}

/**
 * Usage of a run and all its descendants summed from the tree, shaped like the runtime's
 * `usageTotal` (tokens, cost, steps and tool calls include descendants; `ms` is the run's own,
 * LOOP-15). Used where the trace has no report, e.g. after a failure.
 */
export function subtreeUsage(tree: RunTree, node: RunNode, now: number): UsageSummary {
  let tokens = zeroUsage();
  let costUsd: number | null = 0;
  let steps = 0;
  let toolCalls = 0;
  const visit = (current: RunNode) => {
    tokens = addUsage(tokens, current.tokens);
    costUsd = addCost(costUsd, current.costUsd);
    steps += current.step;
    toolCalls += current.calls.done + current.calls.failed + current.calls.running;
    for (const child of tree.childrenOf(current)) visit(child);
  };
  visit(node);
  return { ...tokens, costUsd, steps, toolCalls, ms: elapsedMs(node, now) };
}
