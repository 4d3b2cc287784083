/** What the trace viewer's page is given: the trace's runs, bars, figures and events, computed once in Node (spec/viewer.md). */
import type { TraceEventBase } from '../protocol/trace-events.js';

/** A line of the trace that was not a trace event, skipped (VIEW-8). */
export interface ViewBadLine {
  /** 1-based. */
  line: number;
  /** Why, naming the file and the line. */
  message: string;
}

/** How a run ended as the page shows it; `running` when the trace holds no end for it yet (VIEW-7). */
export type ViewRunStatus = 'completed' | 'failed' | 'cancelled' | 'running';

/** Token and dollar figures of some model answers (the report's tally, CLI-17). */
export interface ViewFigures {
  runs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** `null` when any answer in it has no known price. */
  costUsd: number | null;
}

/** Figures grouped under a model or a tier. */
export interface ViewGroup {
  key: string | null;
  /** The key made short for a line (a replay cassette by its file name), `(none)` for `null`. */
  label: string;
  figures: ViewFigures;
}

/** One run of the delegation tree (VIEW-2). */
export interface ViewRun {
  run: string;
  parent: string | null;
  depth: number;
  name: string;
  /** The call that delegated it, as its tool and a short summary of its parameters (`worker · {"topic":"tides"}`), `null` for the top run (VIEW-12). */
  call: string | null;
  /** Its Request (`run.started.request`), relative to the top Request's folder when it is a path there (VIEW-12). */
  request: string | null;
  /** The model(s) its answers came from, else the model it was started with. */
  model: string | null;
  /** The model made short for a line: a replay cassette by its file name. */
  modelLabel: string;
  tier: string | null;
  status: ViewRunStatus;
  /** The error code of a failed or cancelled run. */
  code: string | null;
  /** The error message of a failed or cancelled run. */
  message: string | null;
  own: ViewFigures;
  /** Itself and every descendant. */
  subtree: ViewFigures;
  /** Child run ids, in the order they started. */
  children: string[];
  /** It failed or was cancelled, or a descendant did (VIEW-2). */
  failedPath: boolean;
  /** On the critical path: the top run, then the delegation of each that ended last (VIEW-3). */
  critical: boolean;
}

/** What a timeline bar stands for. */
export type ViewSpanKind = 'run' | 'model' | 'call';

/** One bar of the timeline (VIEW-3); times are milliseconds since the trace's first event. */
export interface ViewSpan {
  kind: ViewSpanKind;
  run: string;
  /** The run's name, the model call's `step N` (with its attempt), or the call's tool and id. */
  label: string;
  start: number;
  /** `null` when the trace holds no end for it (a run or call still going, VIEW-7). */
  end: number | null;
  /** `ok`, `failed`, `cancelled`, `running`, or `skipped`. */
  status: string;
  /** What it stands for: its index in `runs`, `exchanges` or `calls`, by its kind. */
  ref: number;
  /** The index in `events` of the event that started it. */
  event: number;
  critical: boolean;
}

/** One attempt of a model call (VIEW-5): what was sent and what came back, by event index. */
export interface ViewExchange {
  run: string;
  step: number;
  attempt: number;
  /** The `model.request` event's index, or `null` when the trace lacks it. */
  request: number | null;
  /** The `model.response` event's index, or `null` when it has not come (or the attempt failed). */
  response: number | null;
  /** The `model.retry` events' indexes. */
  retries: number[];
  /** The answering model made short for a line, `null` until it answered. */
  modelLabel: string | null;
}

/** One call of a run (VIEW-5): its events, by index. */
export interface ViewCall {
  run: string;
  call: string;
  tool: string;
  /** Its `call.started`, `call.completed`, `call.failed`, `call.skipped`, `approval.*` and `delegate.*` events' indexes, in trace order. */
  events: number[];
  /** The child run of a delegation, or `null`. */
  child: string | null;
}

/** One approval asked (VIEW-6). */
export interface ViewApproval {
  run: string;
  call: string;
  tool: string;
  params: unknown;
  /** `null` while undecided. */
  decision: string | null;
  reason: string | null;
  /** Who decided (`approval.decided.by`), `null` when the trace does not say. */
  by: string | null;
}

/** Everything the page shows. */
export interface ViewData {
  /** The trace file's path, as given. */
  source: string;
  /** ISO time of the first event, or `null` for an empty trace. */
  startedAt: string | null;
  /** Milliseconds from the first event to the last. */
  durationMs: number;
  /** Depth first, parents before their children. */
  runs: ViewRun[];
  spans: ViewSpan[];
  exchanges: ViewExchange[];
  calls: ViewCall[];
  approvals: ViewApproval[];
  /** Answers grouped by model, in order of first use (VIEW-4). */
  models: ViewGroup[];
  /** Runs' own answers grouped by tier (VIEW-4). */
  tiers: ViewGroup[];
  /** Every run's answers: the top run's `usageTotal` when it completed (VIEW-4). */
  total: ViewFigures;
  /** The top run's `run.completed.usageTotal`, or `null` when the trace holds none. */
  usageTotal: ViewFigures | null;
  /** The trace's events, in order. */
  events: TraceEventBase[];
  /** Lines that were not trace events, skipped (VIEW-8). */
  badLines: ViewBadLine[];
}
