/** The live tree on a terminal: renders a RunTree as lines and redraws it in place on a TTY stream. */
import type { TraceEvent, TraceListener } from '../protocol/trace.js';
import { RunTree, elapsedMs, type RetryState, type RunNode, type RunStatus } from './run-tree.js';

/** A writable stream that may be a terminal (`process.stderr` is one). */
export type TerminalStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };

/** SGR styles the views use. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

const SGR: Record<Style, [number, number]> = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] };

/** Wraps text in an ANSI style, or returns it unchanged when colour is off. */
export function paint(text: string, style: Style | undefined, color: boolean): string {
  if (!color || style === undefined || text === '') return text;
  const [on, off] = SGR[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** Whether to colour output: never when `NO_COLOR` is set to anything non-empty (no-color.org). */
export function colorEnabled(env: Record<string, string | undefined>): boolean {
  return !env.NO_COLOR;
}

/** A token count for a narrow column: `840`, `1.2k`, `123k`, `4.5M`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 10_000) return `${(tokens / 1000).toFixed(1)}k`;
  if (tokens < 1_000_000) return `${Math.round(tokens / 1000)}k`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

/** A cost in US dollars: `$0.0123`, `$1.50`, two significant digits below a hundredth of a cent (`$0.000041`), or `$?` when unknown. */
export function formatCost(costUsd: number | null): string {
  if (costUsd === null) return '$?';
  if (costUsd === 0) return '$0';
  // A fast-tier call costs a fraction of a cent: shown, not rounded away to $0.0000.
  if (costUsd < 0.0001) return `$${costUsd.toFixed(Math.min(10, 1 - Math.floor(Math.log10(costUsd))))}`;
  return costUsd < 1 ? `$${costUsd.toFixed(4)}` : `$${costUsd.toFixed(2)}`;
}

/** A duration: `340ms`, `1.2s`, `2m05s`. */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** A model id made short enough for a line: a replay cassette shows its file name, not its path. */
export function formatModel(model: string | null): string {
  if (model === null) return 'no model';
  const replay = /^replay:(.*)$/.exec(model);
  if (replay) return `replay:${replay[1]?.split(/[\\/]/).pop() ?? ''}`;
  return model;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The glyphs of finished runs; a running run shows a spinner frame. */
export const STATUS_GLYPHS: Record<Exclude<RunStatus, 'running'>, string> = { done: '✓', failed: '✗', cancelled: '⊘' };

const STATUS_STYLES: Record<RunStatus, Style> = { running: 'cyan', done: 'green', failed: 'red', cancelled: 'yellow' };

/** The glyph for a run's status; running runs turn a spinner driven by `now`. */
export function statusGlyph(status: RunStatus, now: number): string {
  if (status !== 'running') return STATUS_GLYPHS[status];
  return SPINNER[Math.floor(now / 80) % SPINNER.length] as string;
}

/** A piece of a line with its style, so a line can be cut to a width before it is coloured. */
interface Segment {
  text: string;
  style?: Style;
}

/**
 * Joins segments into at most `width` visible characters, cutting with `…`. Counts code points:
 * box drawing, glyphs and Latin text are one column wide; wide (CJK) characters may overflow.
 */
function fit(segments: Segment[], width: number | undefined, color: boolean): string {
  let room = width === undefined ? Number.POSITIVE_INFINITY : Math.max(1, width);
  let line = '';
  for (const [index, segment] of segments.entries()) {
    const characters = Array.from(segment.text);
    // A segment that fills the line exactly fits only when nothing visible follows it.
    if (characters.length < room || (characters.length === room && segments.slice(index + 1).every((next) => next.text === ''))) {
      line += paint(segment.text, segment.style, color);
      room -= characters.length;
      continue;
    }
    line += paint(`${characters.slice(0, Math.max(0, room - 1)).join('')}…`, segment.style, color);
    break;
  }
  return line;
}

/** The part of a run's call label its name does not already say: `worker · {"topic":"tides"}` under a run named `worker` is `{"topic":"tides"}` (CLI-6). */
function callText(node: RunNode): string | undefined {
  const label = node.callLabel;
  if (label === undefined || label === node.name) return undefined;
  return label.startsWith(`${node.name} · `) ? label.slice(node.name.length + 3) : label;
}

/** How a parent's delegations stand: `37/100 done · 2 failed · 61 running`, the zero counts left out but `done` (CLI-6). */
export function childCounts(children: readonly RunNode[]): string {
  const counts: Record<RunStatus, number> = { running: 0, done: 0, failed: 0, cancelled: 0 };
  for (const child of children) counts[child.status]++;
  const parts = [`${counts.done}/${children.length} done`];
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.cancelled > 0) parts.push(`${counts.cancelled} cancelled`);
  if (counts.running > 0) parts.push(`${counts.running} running`);
  return parts.join(' · ');
}

function nodeSegments(node: RunNode, children: readonly RunNode[], now: number): Segment[] {
  const details = [
    node.step === 0 && node.status === 'running' ? 'starting' : `step ${node.step}`,
    `${formatTokens(node.tokens.inputTokens)}→${formatTokens(node.tokens.outputTokens)} tok`,
    formatCost(node.costUsd),
    formatElapsed(elapsedMs(node, now)),
  ];
  // Calls running ▸, done ✓ and failed ✗, tersely: the line has to fit a terminal's width.
  const calls = [
    node.calls.running > 0 ? `▸${node.calls.running}` : '',
    node.calls.done > 0 ? `✓${node.calls.done}` : '',
    node.calls.failed > 0 ? `✗${node.calls.failed}` : '',
  ].filter(Boolean);
  if (calls.length > 0) details.push(`calls ${calls.join(' ')}`);
  const segments: Segment[] = [{ text: statusGlyph(node.status, now), style: STATUS_STYLES[node.status] }, { text: ' ' }, { text: node.name, style: 'bold' }];
  const call = callText(node);
  if (call !== undefined) segments.push({ text: ` · ${call}` });
  if (children.length > 0) segments.push({ text: ` · ${childCounts(children)}`, style: 'bold' });
  segments.push({ text: '  ' }, { text: formatModel(node.model), style: 'dim' }, { text: ` · ${details.join(' · ')}` });
  if (node.error) segments.push({ text: ` · ${node.error.code}`, style: STATUS_STYLES[node.status] });
  if (node.retry) segments.push({ text: ` · ${retryText(node.retry, now)}`, style: 'yellow' });
  return segments;
}

/** A model retry in a line: `retry 1 in 1.5s: <reason>` while waiting for it, `retry 1: <reason>` once it is under way. */
export function retryText(retry: RetryState, now: number): string {
  const waiting = retry.retryAt - now;
  const when = waiting > 0 ? ` in ${formatElapsed(waiting)}` : '';
  return `retry ${retry.attempt}${when}${retry.reason ? `: ${retry.reason}` : ''}`;
}

/** How to render a frame. */
export interface RenderOptions {
  /** The time elapsed durations of running runs are measured to, in epoch milliseconds. */
  now: number;
  /** ANSI colours (default off). */
  color?: boolean;
  /** Visible characters per line; longer lines are cut with `…`. */
  width?: number;
  /** Lines per frame; a taller tree ends with a `… n more runs` line. */
  maxLines?: number;
}

/**
 * Renders the tree as lines: one per run, children under their parent with `├─`/`└─`, each with
 * its status glyph, request name, the call that delegated it (`worker · {"topic":"tides"}`, CLI-6),
 * for a parent how its delegations stand (`37/100 done · 2 failed · 61 running`, CLI-6), model, `step n`, tokens in→out, `$cost` (`$?` unknown), elapsed
 * time, and its calls (`calls ▸running ✓done ✗failed`) when it has any.
 */
export function renderTree(tree: RunTree, options: RenderOptions): string[] {
  const color = options.color ?? false;
  const maxLines = options.maxLines;
  const lines: string[] = [];
  let runs = 0;
  const visit = (node: RunNode, prefix: string, branch: string) => {
    runs++;
    const children = tree.childrenOf(node);
    // Lines past the frame are counted, not rendered: a tree of a thousand runs redrawn ten times a second shows a terminal's worth.
    if (maxLines === undefined || lines.length < maxLines) {
      lines.push(fit([{ text: prefix + branch, style: 'dim' }, ...nodeSegments(node, children, options.now)], options.width, color));
    }
    const below = prefix + (branch === '' ? '' : branch === '├─ ' ? '│  ' : '   ');
    for (const [index, child] of children.entries()) visit(child, below, index === children.length - 1 ? '└─ ' : '├─ ');
  };
  for (const root of tree.roots) visit(root, '', '');
  if (maxLines !== undefined && runs > maxLines) {
    const kept = Math.max(0, maxLines - 1);
    return [...lines.slice(0, kept), fit([{ text: `… ${runs - kept} more runs`, style: 'dim' }], options.width, color)];
  }
  return lines;
}

/** Options of the live writer. */
export interface LiveTreeOptions {
  /** The environment (reads `NO_COLOR`); default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Minimum time between frames; default 100 ms (at most 10 frames a second). */
  frameMs?: number;
  /** The clock; default `Date.now`. */
  now?: () => number;
  /** The tree to show; default a new one fed by `listener`. */
  tree?: RunTree;
}

const CLEAR_LINE = '\u001b[2K';
const CLEAR_BELOW = '\u001b[J';

/** Moves the cursor to the start of the line `lines` lines up. */
function cursorUp(lines: number): string {
  return lines > 0 ? `\r\u001b[${lines}A` : '\r';
}

/**
 * Shows a RunTree live on a terminal: the first event draws a frame at once, later changes (and
 * the ticking clock of running runs) redraw it in place, at most once per `frameMs`, by moving the
 * cursor up over the previous frame and clearing it. `stop()` draws the final frame and leaves it.
 * Writes to nothing but the stream it is given. Between frames, events are only held: the tree
 * takes them all just before it is drawn or read (`tree`), as nothing shows them sooner, and one
 * pass over a frame's events costs a fraction of what taking each amid the run's own work did
 * (events do not change once emitted, TRACE-23).
 */
export class LiveTreeWriter {
  private readonly shown: RunTree;
  /** Events since the last frame, not yet in the tree. */
  private held: TraceEvent[] = [];
  private readonly color: boolean;
  private readonly frameMs: number;
  private readonly now: () => number;
  private drawn = 0;
  private dirty = false;
  private stopped = false;
  private suspended = false;
  private ticker: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly stream: TerminalStream,
    options: LiveTreeOptions = {},
  ) {
    this.shown = options.tree ?? new RunTree();
    this.color = colorEnabled(options.env ?? process.env);
    this.frameMs = options.frameMs ?? 100;
    this.now = options.now ?? Date.now;
  }

  /** The trace listener feeding the tree. */
  readonly listener: TraceListener = (event: TraceEvent) => {
    if (this.stopped) return;
    if (this.ticker !== undefined) {
      this.held.push(event);
      return;
    }
    if (!this.shown.apply(event)) return;
    this.dirty = true;
    this.draw();
    // The timer must not keep the process alive after the run.
    this.ticker = setInterval(() => this.tick(), this.frameMs);
    this.ticker.unref?.();
  };

  /** The tree being shown, with every event received so far. */
  get tree(): RunTree {
    this.settle();
    return this.shown;
  }

  /** Gives the tree the events held since the last frame. */
  private settle(): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (const event of held) if (this.shown.apply(event)) this.dirty = true;
  }

  /** Writes a line above the live frame (messages that must not be overwritten by the next frame). */
  log(line: string): void {
    if (this.stopped || this.drawn === 0) {
      this.stream.write(`${line}\n`);
      return;
    }
    this.stream.write(`${cursorUp(this.drawn)}${CLEAR_BELOW}${line}\n`);
    this.drawn = 0;
    this.draw();
  }

  /** Erases the frame and draws nothing until `resume()`: a prompt needs the terminal to itself. */
  suspend(): void {
    if (this.drawn > 0) this.stream.write(`${cursorUp(this.drawn)}${CLEAR_BELOW}`);
    this.drawn = 0;
    this.suspended = true;
  }

  /** Draws again after `suspend()`. */
  resume(): void {
    this.suspended = false;
    if (!this.stopped) this.draw();
  }

  /** Stops redrawing: draws the final frame (when anything was shown) and leaves it on screen. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
    this.settle();
    if (this.drawn > 0 || this.dirty) this.draw();
    this.stopped = true;
  }

  private tick(): void {
    this.settle();
    // Running runs' elapsed times and spinners move even when no event arrives.
    if (this.dirty || this.shown.running) this.draw();
  }

  private draw(): void {
    if (this.suspended) {
      this.dirty = true;
      return;
    }
    const columns = this.stream.columns;
    const rows = this.stream.rows;
    this.settle();
    const lines = renderTree(this.shown, {
      now: this.now(),
      color: this.color,
      // One column spare: a line exactly as wide as the terminal wraps on some terminals, and a
      // wrapped line would make the next frame's cursor movement miss.
      ...(columns !== undefined && columns > 1 ? { width: columns - 1 } : {}),
      ...(rows !== undefined && rows > 1 ? { maxLines: rows - 1 } : {}),
    });
    const frame = `${cursorUp(this.drawn)}${lines.map((line) => `${CLEAR_LINE}${line}\n`).join('')}${CLEAR_BELOW}`;
    this.stream.write(frame);
    this.drawn = lines.length;
    this.dirty = false;
  }
}
