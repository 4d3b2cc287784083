/** Builds the viewer's data from a trace, event by event: the report's cost tree for the figures, and the bars, model calls, calls and approvals beside it (spec/viewer.md). */
import { basename, dirname, isAbsolute, relative } from 'node:path';
import { callLabel } from './progress/call-label.js';
import { type CostReport, type GroupCost, type RunCost, type Tally, costReport, jsonCost, tallyFigures } from './report/cost-report.js';
import { CostTree, type CostRunStatus } from './report/cost-tree.js';
import type { BadTraceLine } from './report/read-trace.js';
import { formatModel } from './progress/tree-renderer.js';
import type { TraceEventBase, TraceEventOf } from '../protocol/trace/events.js';
import { foldEvent, type TraceHandlers } from './report/trace-fold.js';
import { isJsonObject, isMetaProperty } from '../protocol/types.js';
import type { ViewApproval, ViewCall, ViewData, ViewExchange, ViewFigures, ViewGroup, ViewRun, ViewRunStatus, ViewSpan } from '../viewer/view-data.js';

/** How the view labels tiers of runs not delegated at one (the report's catalog, CLI-17). */
export interface TraceViewOptions {
  tierOf?(model: string): string | undefined;
}

const STATUS: Record<CostRunStatus, ViewRunStatus> = { done: 'completed', failed: 'failed', cancelled: 'cancelled', unfinished: 'running' };

/** The figures of a tally. */
function figuresOf(tally: Tally): ViewFigures {
  return { runs: tally.runs, ...tallyFigures(tally) };
}

/** A number field of an event, or 0. */
function numberField(event: Record<string, unknown>, key: string): number {
  const value = event[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** A string field of an event, or `fallback`. */
function stringField(event: Record<string, unknown>, key: string, fallback: string): string {
  const value = event[key];
  return typeof value === 'string' ? value : fallback;
}

/**
 * The viewer's data of one trace. Feed it events in trace order with `apply`, then call `view`.
 * Figures come from the cost report priced as the trace recorded them (so the total is the top
 * run's `usageTotal`, VIEW-4); everything else is indexes into the events it keeps.
 */
export class TraceView {
  private readonly tree = new CostTree();
  private readonly events: TraceEventBase[] = [];
  private readonly times: number[] = [];
  private readonly exchanges = new Map<string, ViewExchange>();
  private readonly calls = new Map<string, ViewCall>();
  /** Each call's label by run and call, and each delegated run's, from the call that started it (VIEW-12). */
  private readonly callLabels = new Map<string, string>();
  private readonly runLabels = new Map<string, string>();
  /** The latest attempt of each model call, by run and step: a provider's retries belong to it (VIEW-5). */
  private readonly latestAttempt = new Map<string, ViewExchange>();
  /** Each run's Request, as `run.started` resolved it. */
  private readonly requests = new Map<string, string>();
  private readonly runEvents = new Map<string, { start: number; end: number | null; last: number; failure?: Record<string, unknown>; usageTotal?: unknown }>();

  constructor(private readonly options: TraceViewOptions = {}) {}

  /** The index of the event being taken in, and its run's span of events. */
  private index = 0;
  private span: { start: number; end: number | null; last: number; failure?: Record<string, unknown>; usageTotal?: unknown } = { start: 0, end: null, last: 0 };
  /** Where each event the view reads goes. */
  private readonly handlers: TraceHandlers<void> = {
    'model.retry': (event) => {
      // Its `attempt` counts the provider's tries, not re-asks (TRACE-12): it is a retry of the attempt under way.
      const exchange = this.latestAttempt.get(`${event.run}\u0000${event.step}`) ?? this.exchangeOf(event.run, event.step, 0);
      exchange.retries.push(this.index);
    },
    'model.request': (event) => {
      this.exchangeOf(event.run, event.step, event.attempt).request ??= this.index;
    },
    'model.response': (event) => {
      const exchange = this.exchangeOf(event.run, event.step, event.attempt);
      if (exchange.response !== null) return;
      exchange.response = this.index;
      exchange.modelLabel = formatModel(event.replayOf ?? event.model);
    },
    'run.started': (event) => this.started(event.run, event.request),
    'run.resumed': (event) => this.started(event.run, event.request),
    'run.completed': (event) => {
      this.span.end ??= this.index;
      if (event.parent === null) this.span.usageTotal = event.usageTotal;
    },
    'run.failed': (event) => {
      this.span.end ??= this.index;
      this.span.failure = event as unknown as Record<string, unknown>;
    },
    'delegate.started': (event) => this.delegated(event),
    'delegate.completed': (event) => this.delegated(event),
    'delegate.failed': (event) => this.delegated(event),
    'call.started': (event) => {
      this.callLabels.set(`${event.run}\u0000${event.call}`, callLabel(event.tool, event.params));
      this.callOf(event.run, event.call, event.tool).events.push(this.index);
    },
    'call.completed': (event) => this.callEvent(event),
    'call.failed': (event) => this.callEvent(event),
    'call.skipped': (event) => this.callEvent(event),
    'approval.requested': (event) => this.callEvent(event),
    'approval.decided': (event) => this.callEvent(event),
  };

  /** Takes one event into the view. */
  apply(event: TraceEventBase): void {
    const index = this.events.length;
    this.events.push(event);
    const parsed = Date.parse(event.ts);
    // A line without a usable time sits at the time of the one before it.
    const time = Number.isFinite(parsed) ? parsed : (this.times[index - 1] ?? 0);
    this.times.push(time);
    this.tree.apply(event);
    const run = this.runEvents.get(event.run) ?? { start: index, end: null, last: index };
    this.runEvents.set(event.run, run);
    run.last = index;
    this.index = index;
    this.span = run;
    foldEvent(event, this.handlers, undefined);
  }

  private started(run: string, request: string): void {
    if (!this.requests.has(run)) this.requests.set(run, request);
  }

  private delegated(event: TraceEventOf<'delegate.started' | 'delegate.completed' | 'delegate.failed'>): void {
    const fields = event as unknown as Record<string, unknown>;
    const call = this.callOf(event.run, event.call, stringField(fields, 'tool', ''));
    // A `delegate` outcome that started no child run names none (TRACE-17).
    if (event.child !== null) {
      call.child = event.child;
      const label = this.callLabels.get(`${event.run}\u0000${event.call}`);
      if (label !== undefined) this.runLabels.set(event.child, label);
    }
    call.events.push(this.index);
  }

  private callEvent(event: { run: string; call: string; tool: string }): void {
    this.callOf(event.run, event.call, event.tool).events.push(this.index);
  }

  /** The page's data; `source` names the trace, `badLines` are the lines skipped. */
  view(source: string, badLines: BadTraceLine[] = []): ViewData {
    const report = costReport(this.tree, {
      // As recorded: the page's total is then the top run's usageTotal (VIEW-4).
      price: (answer) => answer.costUsd,
      ...(this.options.tierOf ? { tierOf: this.options.tierOf } : {}),
    });
    const origin = this.times[0] ?? 0;
    const runs = this.viewRuns(report);
    const critical = new Set(runs.filter((run) => run.critical).map((run) => run.run));
    const top = report.roots[0];
    const usageTotal = top === undefined ? undefined : this.runEvents.get(top.run.run)?.usageTotal;
    return {
      source,
      startedAt: this.events[0]?.ts ?? null,
      durationMs: this.times.reduce((latest, time) => Math.max(latest, time - origin), 0),
      runs,
      spans: this.spans(runs, critical, origin),
      exchanges: [...this.exchanges.values()],
      calls: [...this.calls.values()],
      approvals: this.approvals(),
      models: report.models.map(groupOf),
      tiers: report.tiers.map(groupOf),
      total: figuresOf(report.total),
      usageTotal: usageTotal === undefined ? null : usageFigures(usageTotal, report.total.runs),
      events: this.events,
      badLines,
    };
  }

  private exchangeOf(run: string, step: number, attempt: number): ViewExchange {
    const key = `${run}\u0000${step}\u0000${attempt}`;
    let exchange = this.exchanges.get(key);
    if (!exchange) {
      exchange = { run, step, attempt, request: null, response: null, retries: [], modelLabel: null };
      this.exchanges.set(key, exchange);
      const latest = this.latestAttempt.get(`${run}\u0000${step}`);
      if (latest === undefined || latest.attempt <= attempt) this.latestAttempt.set(`${run}\u0000${step}`, exchange);
    }
    return exchange;
  }

  private callOf(run: string, call: string, tool: string): ViewCall {
    const key = `${run}\u0000${call}`;
    let found = this.calls.get(key);
    if (!found) {
      found = { run, call, tool, events: [], child: null };
      this.calls.set(key, found);
    }
    if (found.tool === '' && tool !== '') found.tool = tool;
    return found;
  }

  /** The runs depth first, with status, figures, the failed path and the critical path. */
  private viewRuns(report: CostReport): ViewRun[] {
    const critical = new Set<string>();
    const endOf = (cost: RunCost) => {
      const end = this.runEvents.get(cost.run.run)?.end;
      return end === undefined || end === null ? Number.POSITIVE_INFINITY : (this.times[end] ?? 0);
    };
    // From the top run down, the delegation that ended last: what held its parent's end (VIEW-3).
    for (let node: RunCost | undefined = report.roots[0]; node !== undefined; ) {
      critical.add(node.run.run);
      let last: RunCost | undefined;
      for (const child of node.children) if (last === undefined || endOf(child) >= endOf(last)) last = child;
      node = last;
    }
    const failedPath = new Set<string>();
    const markFailed = (cost: RunCost): boolean => {
      let failed = cost.run.status === 'failed' || cost.run.status === 'cancelled';
      for (const child of cost.children) if (markFailed(child)) failed = true;
      if (failed) failedPath.add(cost.run.run);
      return failed;
    };
    for (const root of report.roots) markFailed(root);
    // References are shown from the top Request's folder, not as the host's absolute paths (VIEW-12).
    const top = report.roots[0] === undefined ? undefined : this.requests.get(report.roots[0].run.run);
    const folder = top !== undefined && isAbsolute(top) ? dirname(top) : null;
    return report.runs.map((cost) => {
      const request = this.requests.get(cost.run.run);
      const failure = this.runEvents.get(cost.run.run)?.failure;
      return {
        run: cost.run.run,
        parent: cost.run.parent,
        depth: cost.run.depth,
        name: cost.run.name,
        call: this.runLabels.get(cost.run.run) ?? null,
        request: request === undefined ? null : shownReference(request, folder),
        model: cost.model,
        modelLabel: cost.models.length > 0 ? cost.models.map(formatModel).join(', ') : formatModel(cost.model),
        tier: cost.tier,
        status: STATUS[cost.run.status],
        code: cost.run.code ?? null,
        message: failure === undefined ? null : stringField(failure, 'message', ''),
        own: figuresOf(cost.own),
        subtree: figuresOf(cost.subtree),
        children: cost.children.map((child) => child.run.run),
        failedPath: failedPath.has(cost.run.run),
        critical: critical.has(cost.run.run),
      };
    });
  }

  /** The timeline's bars: each run, then its model calls and calls, in order of start (VIEW-3). */
  private spans(runs: readonly ViewRun[], critical: ReadonlySet<string>, origin: number): ViewSpan[] {
    const at = (index: number | null | undefined) => (index === null || index === undefined ? null : (this.times[index] ?? origin) - origin);
    const spans: ViewSpan[] = [];
    for (const [index, run] of runs.entries()) {
      const events = this.runEvents.get(run.run);
      if (!events) continue;
      spans.push({
        kind: 'run',
        run: run.run,
        label: run.name,
        start: at(events.start) ?? 0,
        end: at(events.end),
        status: run.status === 'completed' ? 'ok' : run.status,
        ref: index,
        event: events.start,
        critical: run.critical,
      });
    }
    for (const [index, exchange] of [...this.exchanges.values()].entries()) {
      const first = exchange.request ?? exchange.response ?? exchange.retries[0] ?? 0;
      const response = exchange.response === null ? undefined : (this.events[exchange.response] as unknown as Record<string, unknown>);
      spans.push({
        kind: 'model',
        run: exchange.run,
        label: `step ${exchange.step}${exchange.attempt > 0 ? ` re-ask ${exchange.attempt}` : ''}`,
        start: at(first) ?? 0,
        end: at(exchange.response),
        status: exchange.response === null ? 'running' : response?.solution === null ? 'failed' : 'ok',
        ref: index,
        event: first,
        critical: false,
      });
    }
    for (const [index, call] of [...this.calls.values()].entries()) {
      const first = call.events[0] ?? 0;
      const end = call.events.find((index) => /^call\.(completed|failed|skipped)$/.test(this.events[index]?.event ?? ''));
      const ending = end === undefined ? undefined : this.events[end]?.event;
      const status = ending === 'call.completed' ? 'ok' : ending === 'call.failed' ? 'failed' : ending === 'call.skipped' ? 'skipped' : 'running';
      spans.push({
        kind: 'call',
        run: call.run,
        label: `${call.tool} ${call.call}`,
        start: at(first) ?? 0,
        end: at(end),
        status,
        ref: index,
        event: first,
        critical: call.child !== null && critical.has(call.child),
      });
    }
    return spans;
  }

  /** Every approval asked, with its decision when one came (VIEW-6). */
  private approvals(): ViewApproval[] {
    const approvals: ViewApproval[] = [];
    for (const call of this.calls.values()) {
      let open: ViewApproval | undefined;
      for (const index of call.events) {
        const event = this.events[index] as unknown as Record<string, unknown>;
        if (event.event === 'approval.requested') {
          open = { run: call.run, call: call.call, tool: call.tool, params: shownParams(event.params), decision: null, reason: null, by: null };
          approvals.push(open);
        } else if (event.event === 'approval.decided' && open) {
          open.decision = stringField(event, 'decision', 'unknown');
          open.reason = typeof event.reason === 'string' ? event.reason : null;
          open.by = typeof event.by === 'string' ? event.by : null;
          open = undefined;
        }
      }
    }
    return approvals;
  }
}

/** A Request's reference as the page shows it: a path under `folder` relative to it, other references as they are (VIEW-12). */
export function shownReference(reference: string, folder: string | null): string {
  if (folder === null || !isAbsolute(reference)) return reference;
  return relative(folder, reference) || basename(reference);
}

/** A group of the report as the page shows it. */
function groupOf(group: GroupCost): ViewGroup {
  return { key: group.key, label: group.key === null ? '(none)' : formatModel(group.key), figures: figuresOf(group.tally) };
}

/** A `usageTotal` (a usage summary) as figures. */
function usageFigures(value: unknown, runs: number): ViewFigures {
  const usage = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  return {
    runs,
    steps: numberField(usage, 'steps'),
    inputTokens: numberField(usage, 'inputTokens'),
    outputTokens: numberField(usage, 'outputTokens'),
    cacheReadTokens: numberField(usage, 'cacheReadTokens'),
    cacheWriteTokens: numberField(usage, 'cacheWriteTokens'),
    costUsd: usage.costUsd === null ? null : jsonCost(numberField(usage, 'costUsd')),
  };
}

/** An approval's parameters as the terminal prompt shows them: without the meta-properties (the call's `_tool`, what the document fixed). */
function shownParams(params: unknown): unknown {
  if (!isJsonObject(params)) return params ?? null;
  return Object.fromEntries(Object.entries(params).filter(([key]) => !isMetaProperty(key)));
}
