/** The end-of-run summary on stderr: outcome, total tokens and cost, elapsed time, and a line per delegate. */
import { tokensOf, type UsageSummary } from '../protocol/usage.js';
import { subtreeUsage, type RunNode, type RunStatus, type RunTree } from './run-tree.js';
import type { Usage } from '../protocol/types.js';
import { STATUS_GLYPHS, formatCost, formatElapsed, formatModel, paint, type Style } from './tree-renderer.js';

/** What the summary needs of a run's result (a `RunResult` fits). */
export type RunOutcome =
  | { ok: true; output: unknown; usageTotal: UsageSummary }
  | { ok: false; error: { code: string; message: string }; usageTotal: UsageSummary };

/** One child run in the breakdown. Tokens, cost, steps and time include the child's own delegates. */
export interface DelegateLine {
  run: string;
  name: string;
  model: string | null;
  /** 1 for a delegate of the top run, 2 for a delegate's delegate, and so on. */
  depth: number;
  status: RunStatus;
  /** The failure code, for failed and cancelled delegates. */
  code?: string;
  steps: number;
  tokens: Usage;
  costUsd: number | null;
  ms: number;
}

/** The summary's data, before it is formatted. */
export interface Summary {
  ok: boolean;
  /** The top run's request name, when the trace named it. */
  name?: string;
  output?: unknown;
  error?: { code: string; message: string };
  /** Tokens of the whole run tree. */
  tokens: Usage;
  costUsd: number | null;
  ms: number;
  /** Runs in the tree (the top run and every delegation). */
  runs: number;
  /** Model steps across the tree. */
  steps: number;
  /** Tool calls across the tree. */
  toolCalls: number;
  delegates: DelegateLine[];
}

/**
 * Builds the summary from a run's result and the tree of its trace. Totals come from the result's
 * `usageTotal`; each delegate line from its `delegate.completed` report, or, for a delegate that
 * failed, from what the tree saw of it.
 */
export function summarize(tree: RunTree, outcome: RunOutcome, now: number = tree.lastEventAt): Summary {
  const total = outcome.usageTotal;
  const nodes = tree.nodes();
  const root = tree.roots[0];
  const delegates: DelegateLine[] = nodes.filter((node) => node.depth > (root?.depth ?? 0)).map((node) => delegateLine(tree, node, root, now));
  return {
    ok: outcome.ok,
    ...(root && root.name !== root.run ? { name: root.name } : {}),
    ...(outcome.ok ? { output: outcome.output } : { error: { code: outcome.error.code, message: outcome.error.message } }),
    tokens: {
      inputTokens: total.inputTokens,
      outputTokens: total.outputTokens,
      cacheReadTokens: total.cacheReadTokens,
      cacheWriteTokens: total.cacheWriteTokens,
    },
    costUsd: total.costUsd,
    ms: total.ms,
    runs: Math.max(1, nodes.length),
    steps: nodes.length > 0 ? nodes.reduce((sum, node) => sum + node.step, 0) : total.steps,
    toolCalls: nodes.length > 0 ? nodes.reduce((sum, node) => sum + node.calls.done + node.calls.failed, 0) : total.toolCalls,
    delegates,
  };
}

function delegateLine(tree: RunTree, node: RunNode, root: RunNode | undefined, now: number): DelegateLine {
  const usage = node.usageTotal ?? subtreeUsage(tree, node, now);
  return {
    run: node.run,
    name: node.name,
    model: node.model,
    depth: node.depth - (root?.depth ?? 0),
    status: node.status,
    ...(node.error ? { code: node.error.code } : {}),
    steps: usage.steps,
    tokens: tokensOf(usage),
    costUsd: usage.costUsd,
    ms: usage.ms,
  };
}

/** A whole number with thousands separators: `12,345`. */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The output in one short line: a string's first line, or compact JSON, cut at `limit` characters. */
export function previewOutput(output: unknown, limit = 60): string {
  const text = typeof output === 'string' ? (output.split('\n')[0] ?? '') : (JSON.stringify(output) ?? String(output));
  const characters = Array.from(text);
  return characters.length > limit ? `${characters.slice(0, limit - 1).join('')}…` : text;
}

/** Options of the formatted summary. */
export interface FormatSummaryOptions {
  /** ANSI colours (default off). */
  color?: boolean;
}

const STATUS_STYLE: Record<RunStatus, Style> = { running: 'cyan', done: 'green', failed: 'red', cancelled: 'yellow' };

/** Pads the cells of each column to the column's widest cell; the columns in `right` line up on the right. */
function table(rows: string[][], right: ReadonlySet<number>): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, Array.from(cell).length);
  }
  return rows.map((row) =>
    row
      .map((cell, index) => {
        const pad = ' '.repeat((widths[index] ?? 0) - Array.from(cell).length);
        return right.has(index) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

/**
 * Formats the summary as lines:
 *
 * ```
 * ✓ producer done in 96ms · output: {"title":"Rain Ballad",…}
 *   tokens 3,515 in · 514 out · cache 0 read · 0 written
 *   cost $0.0104 · 4 runs · 6 steps · 4 tool calls
 *   delegates
 *     composer          replay:producer.cassette.json  2 steps  1,490 in  240 out  $0.0042  24ms
 *       sound-designer  replay:producer.cassette.json  1 step     210 in   70 out  $0.0007  0ms
 * ```
 */
export function formatSummary(summary: Summary, options: FormatSummaryOptions = {}): string[] {
  const color = options.color ?? false;
  const status: RunStatus = summary.ok ? 'done' : summary.error?.code === 'cancelled_by_user' ? 'cancelled' : 'failed';
  const who = summary.name ? `${summary.name} ` : '';
  const verdict = summary.ok
    ? `done in ${formatElapsed(summary.ms)}`
    : `${status} after ${formatElapsed(summary.ms)}: ${summary.error?.code ?? 'unknown_error'}`;
  const outcome = summary.ok ? ` · output: ${previewOutput(summary.output)}` : '';
  const lines = [`${paint(STATUS_GLYPHS[status], STATUS_STYLE[status], color)} ${paint(`${who}${verdict}`, 'bold', color)}${outcome}`];
  const tokens = summary.tokens;
  lines.push(
    `  tokens ${formatCount(tokens.inputTokens)} in · ${formatCount(tokens.outputTokens)} out · cache ${formatCount(tokens.cacheReadTokens)} read · ${formatCount(tokens.cacheWriteTokens)} written`,
  );
  const plural = (count: number, word: string) => `${formatCount(count)} ${word}${count === 1 ? '' : 's'}`;
  const unknownCost = summary.costUsd === null ? paint(' (some model has no known price)', 'dim', color) : '';
  lines.push(
    `  cost ${formatCost(summary.costUsd)}${unknownCost} · ${plural(summary.runs, 'run')} · ${plural(summary.steps, 'step')} · ${plural(summary.toolCalls, 'tool call')}`,
  );
  if (summary.delegates.length === 0) return lines;
  lines.push('  delegates');
  const rows = summary.delegates.map((line) => [
    `${'  '.repeat(line.depth - 1)}${line.status === 'done' ? '' : `${STATUS_GLYPHS[line.status === 'running' ? 'cancelled' : line.status]} `}${line.name}`,
    formatModel(line.model),
    plural(line.steps, 'step'),
    `${formatCount(line.tokens.inputTokens)} in`,
    `${formatCount(line.tokens.outputTokens)} out`,
    formatCost(line.costUsd),
    formatElapsed(line.ms),
    line.code ?? '',
  ]);
  // Counts, costs and times line up on the right, words on the left.
  for (const row of table(rows, new Set([3, 4, 5, 6]))) lines.push(`    ${row}`);
  return lines;
}
