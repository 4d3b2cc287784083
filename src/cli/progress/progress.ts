/** Progress on stderr: the live tree on a terminal, one plain line per notable trace event otherwise, and the end summary. */
import type { TraceEvent, Tracer } from '../../protocol/trace/trace.js';
import { knownTraceEvent } from '../../protocol/trace/events.js';
import type { Usage } from '../../protocol/usage.js';
import { RunTree } from './run-tree.js';
import { noticeLine, SchemaFormNotices } from '../schema-form-notices.js';
import { TreeCosts } from '../report/tree-costs.js';
import { formatSummary, summarize, type RunOutcome } from './summary.js';
import { LiveTreeWriter, colorEnabled, type TerminalStream } from './tree-renderer.js';

function indent(event: TraceEvent): string {
  return '  '.repeat(event.depth);
}

function tokens(usage: Usage & { costUsd?: number | null }): string {
  const cost = typeof usage.costUsd === 'number' ? ` $${usage.costUsd.toFixed(4)}` : '';
  return ` ${usage.inputTokens}→${usage.outputTokens} tokens${cost}`;
}

/** Formats an event as one progress line, or undefined for events not worth a line. */
export function progressLine(event: TraceEvent): string | undefined {
  const at = indent(event);
  const known = knownTraceEvent(event);
  switch (known?.event) {
    case 'run.started':
      return `${at}▶ ${known.name} (${known.model ?? 'no model'})`;
    case 'model.response':
      // A replayed answer shows the model it stands for, whose price it costs (CAS-14).
      return `${at}  step ${known.step}: ${known.replayOf ? `${known.replayOf} (replayed)` : known.model}${tokens({ ...known.usage, costUsd: known.costUsd })} ${known.ms}ms`;
    case 'model.retry':
      return `${at}  ↻ step ${known.step}: attempt ${known.attempt} failed, retrying in ${known.waitMs}ms: ${known.reason}`;
    case 'call.started':
      return `${at}  → ${known.tool} [${known.call}]`;
    case 'call.failed':
      return `${at}  ✗ ${known.tool} [${known.call}] ${known.error.code}: ${known.error.message}`;
    case 'call.skipped':
      return `${at}  ↷ ${known.tool} [${known.call}] skipped: done already`;
    case 'delegate.started':
      return `${at}  ⇢ delegate ${known.delegate} (${known.resolution})`;
    case 'delegate.failed':
      return `${at}  ✗ delegate [${known.call}] ${known.code}`;
    case 'run.completed':
      return `${at}✓ done${tokens(known.usageTotal)}`;
    case 'run.failed':
      return `${at}✗ ${known.code}: ${known.message}`;
    default:
      return undefined;
  }
}

/** How many tool names the tools line shows before it counts the rest. */
export const SHOWN_TOOLS = 30;

/**
 * The line naming the tools a run is offered, worker tools included, said once as it starts
 * (CLI-6): from its `run.started`'s `tools`; undefined for any other event, or a run that failed
 * before its tools were known.
 */
export function toolsLine(event: TraceEvent): string | undefined {
  const known = knownTraceEvent(event);
  if (known?.event !== 'run.started' || known.tools === undefined) return undefined;
  const { tools } = known;
  const more = tools.length > SHOWN_TOOLS ? ` and ${tools.length - SHOWN_TOOLS} more` : '';
  return `${indent(event)}  tools: ${tools.length === 0 ? 'none' : `${tools.slice(0, SHOWN_TOOLS).join(', ')}${more}`}`;
}

/** A trace listener writing plain progress lines to a stream. */
export function plainProgress(stream: NodeJS.WritableStream): (event: TraceEvent) => void {
  return (event) => {
    const line = progressLine(event);
    if (line !== undefined) stream.write(`${line}\n`);
    const tools = toolsLine(event);
    if (tools !== undefined) stream.write(`${tools}\n`);
  };
}

/** Options of `createProgress`. */
export interface ProgressOptions {
  /** The environment (reads `NO_COLOR`). */
  env: Record<string, string | undefined>;
  /** No progress and no summary. */
  quiet?: boolean;
  /** The clock; default `Date.now`. */
  now?: () => number;
  /** Minimum time between live frames; default 100 ms. */
  frameMs?: number;
  /** The tier of a model, for runs of the summary's cost table delegated at none (the command's model catalog); without it such runs show none. */
  tierOf?: (model: string) => string | undefined;
  /** The cost tree the summary reads, fed by the caller (a resume's holds the journal's earlier events, JOURNAL-12); default, one fed by `tracer` alone. */
  costs?: TreeCosts;
}

/** The progress view of one CLI run. */
export interface Progress {
  /** Writes a line to the stream without disturbing the live tree. */
  log(line: string): void;
  /** Runs `work` (a prompt) with the live tree taken off the screen, and puts it back after. */
  aside<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Ends the view: draws the tree's final frame and, given the run's result, writes the summary.
   * Call it before writing anything else to the stream. Idempotent.
   */
  finish(result?: RunOutcome): void;
}

/**
 * Subscribes the progress view to `tracer`: a live tree when `stream` is a TTY, plain lines
 * otherwise, nothing at all when quiet. It writes only to `stream` (stderr), so `--json` keeps
 * stdout clean.
 */
export function createProgress(tracer: Tracer, stream: TerminalStream, options: ProgressOptions): Progress {
  if (options.quiet) return { log: () => undefined, aside: (work) => work(), finish: () => undefined };
  const now = options.now ?? Date.now;
  // The summary's one source: the same cost tree `delegate-run report` builds from the trace (CLI-17).
  const costs = options.costs ?? new TreeCosts();
  const unfollow = options.costs ? () => undefined : costs.follow(tracer);
  const live = stream.isTTY
    ? new LiveTreeWriter(stream, { env: options.env, now, tree: new RunTree(), ...(options.frameMs === undefined ? {} : { frameMs: options.frameMs }) })
    : undefined;
  const plain = plainProgress(stream);
  // A weaker form than strict is said once per run, model and form (MODEL-17).
  const notices = new SchemaFormNotices();
  const unsubscribe = tracer.subscribe((event) => {
    if (live) {
      live.listener(event);
      // Above the live tree, only the top run's tools: its children show in the tree.
      const tools = event.depth === 0 ? toolsLine(event) : undefined;
      if (tools !== undefined) live.log(tools);
    } else plain(event);
    const notice = notices.take(event);
    if (notice === undefined) return;
    const line = `${indent(event)}  ! ${noticeLine(notice)}`;
    if (live) live.log(line);
    else stream.write(`${line}\n`);
  });
  let finished = false;
  return {
    log(line) {
      if (live) live.log(line);
      else stream.write(`${line}\n`);
    },
    async aside(work) {
      live?.suspend();
      try {
        return await work();
      } finally {
        live?.resume();
      }
    },
    finish(result) {
      if (finished) return;
      finished = true;
      unsubscribe();
      unfollow();
      // The top run has ended: whatever still shows as running was abandoned with it.
      if (result && live) live.tree.cancelRunning(Math.max(live.tree.lastEventAt, now()));
      live?.stop();
      if (!result) return;
      const color = live !== undefined && colorEnabled(options.env);
      // Each answer as the run priced it; the catalog only names the tiers of runs not delegated at one.
      const report = costs.report(options.tierOf);
      const lines = formatSummary(summarize(result, report), { color });
      stream.write(`\n${lines.join('\n')}\n`);
    },
  };
}
