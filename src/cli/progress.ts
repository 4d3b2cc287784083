/** Progress on stderr: the live tree on a terminal, one plain line per notable trace event otherwise, and the end summary. */
import type { TraceEvent, Tracer } from '../protocol/trace.js';
import { RunTree } from './run-tree.js';
import { formatSummary, summarize, type RunOutcome } from './summary.js';
import { LiveTreeWriter, colorEnabled, type TerminalStream } from './tree-renderer.js';

function indent(event: TraceEvent): string {
  return '  '.repeat(event.depth);
}

function tokens(usage: unknown): string {
  if (typeof usage !== 'object' || usage === null) return '';
  const record = usage as Record<string, unknown>;
  const cost = typeof record.costUsd === 'number' ? ` $${record.costUsd.toFixed(4)}` : '';
  return ` ${Number(record.inputTokens ?? 0)}→${Number(record.outputTokens ?? 0)} tokens${cost}`;
}

/** Formats an event as one progress line, or undefined for events not worth a line. */
export function progressLine(event: TraceEvent): string | undefined {
  const at = indent(event);
  switch (event.event) {
    case 'run.started':
      return `${at}▶ ${String(event.name ?? event.request)} (${String(event.model ?? 'no model')})`;
    case 'model.response':
      return `${at}  step ${String(event.step)}: ${String(event.model)}${tokens(event.usage)} ${String(event.ms)}ms`;
    case 'model.retry':
      return `${at}  ↻ step ${String(event.step)}: attempt ${String(event.attempt)} failed, retrying in ${String(event.waitMs)}ms: ${String(event.reason)}`;
    case 'call.started':
      return `${at}  → ${String(event.tool)} [${String(event.call)}]`;
    case 'call.failed':
      return `${at}  ✗ ${String(event.tool)} [${String(event.call)}] ${(event.error as { code: string }).code}: ${(event.error as { message: string }).message}`;
    case 'delegate.started':
      return `${at}  ⇢ delegate ${String(event.delegate)} (${String(event.resolution)})`;
    case 'delegate.failed':
      return `${at}  ✗ delegate [${String(event.call)}] ${String(event.code)}`;
    case 'run.completed':
      return `${at}✓ done${tokens(event.usageTotal)}`;
    case 'run.failed':
      return `${at}✗ ${String(event.code)}: ${String(event.message)}`;
    default:
      return undefined;
  }
}

/** A trace listener writing plain progress lines to a stream. */
export function plainProgress(stream: NodeJS.WritableStream): (event: TraceEvent) => void {
  return (event) => {
    const line = progressLine(event);
    if (line !== undefined) stream.write(`${line}\n`);
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
  const tree = new RunTree();
  const live = stream.isTTY
    ? new LiveTreeWriter(stream, { env: options.env, now, tree, ...(options.frameMs === undefined ? {} : { frameMs: options.frameMs }) })
    : undefined;
  const plain = plainProgress(stream);
  const unsubscribe = tracer.subscribe(
    live
      ? live.listener
      : (event) => {
          tree.apply(event);
          plain(event);
        },
  );
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
      // The top run has ended: whatever still shows as running was abandoned with it.
      if (result) tree.cancelRunning(Math.max(tree.lastEventAt, now()));
      live?.stop();
      if (!result) return;
      const color = live !== undefined && colorEnabled(options.env);
      const lines = formatSummary(summarize(tree, result, now()), { color });
      stream.write(`\n${lines.join('\n')}\n`);
    },
  };
}
