/** The end-of-run summary on stderr: outcome, total tokens and cost, elapsed time, and where the dollars went per run when the run delegated. */
import type { UsageSummary } from '../../protocol/usage.js';
import type { Usage } from '../../protocol/usage.js';
import { formatRunTable } from '../report/cost-table.js';
import type { CostReport } from '../report/cost-report.js';
import { formatCount } from '../report/text-table.js';
import { STATUS_GLYPHS, formatCost, formatElapsed, paint, type Style } from './tree-renderer.js';
import type { RunStatus } from './run-tree.js';

export { formatCount } from '../report/text-table.js';

/** What the summary needs of a run's result (a `RunResult` fits). */
export type RunOutcome =
  | { ok: true; output: unknown; usageTotal: UsageSummary }
  | { ok: false; error: { code: string; message: string }; usageTotal: UsageSummary };

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
  /** Some answer of the tree was replayed, so the cost is what the models it stands for would have cost (CAS-14). */
  replayed: boolean;
  ms: number;
  /** Runs in the tree (the top run and every delegation). */
  runs: number;
  /** Model steps across the tree (LOOP-15). */
  steps: number;
  /** Tool calls across the tree (LOOP-15). */
  toolCalls: number;
  /** Where the dollars went, run by run, when the top run delegated (CLI-6, CLI-17). */
  costs?: CostReport;
}

/**
 * Builds the summary from a run's result and the cost report of its trace. Totals come from the
 * result's `usageTotal`, which counts the whole tree; the name and the number of runs from the
 * report, and the breakdown per run, kept only when the top run has delegations.
 */
export function summarize(outcome: RunOutcome, costs: CostReport): Summary {
  const total = outcome.usageTotal;
  const root = costs.roots[0]?.run;
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
    replayed: costs.total.replayed,
    ms: total.ms,
    runs: Math.max(1, costs.runs.length),
    steps: total.steps,
    toolCalls: total.toolCalls,
    ...(costs.roots.some((cost) => cost.children.length > 0) ? { costs } : {}),
  };
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

/** The delegations of one parent the summary's table shows before it folds the rest into one row (CLI-6). */
export const SUMMARY_CHILDREN = 20;

const STATUS_STYLE: Record<RunStatus, Style> = { running: 'cyan', done: 'green', failed: 'red', cancelled: 'yellow' };

/**
 * Formats the summary as lines; a run that delegated adds where the dollars went, the table
 * `delegate-run report` prints for the same trace (CLI-17):
 *
 * ```
 * ✓ producer done in 96ms · output: {"title":"Rain Ballad",…}
 *   tokens 3,515 in · 514 out · cache 0 read · 0 written
 *   cost $0.0104 (replayed) · 4 runs · 6 steps · 4 tool calls
 *   cost by run
 *     run                  model                tier  steps  input  output  cache read  cache write                cost
 *     producer             openai:gpt-4.1       -         2  1,820     208           0            0  $0.0053 (replayed)
 *       composer           openai:gpt-4.1-nano  fast      2  1,280     170           0            0  $0.0002 (replayed)
 *     …
 *     total                4 runs                         6  3,515     514           0            0  $0.0104 (replayed)
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
  // Replayed answers are priced as the models their cassette entries name (CAS-14): said, so nobody takes them for a bill.
  const replayed = summary.replayed ? paint(' (replayed)', 'dim', color) : '';
  lines.push(
    `  cost ${formatCost(summary.costUsd)}${replayed}${unknownCost} · ${plural(summary.runs, 'run')} · ${plural(summary.steps, 'step')} · ${plural(summary.toolCalls, 'tool call')}`,
  );
  if (!summary.costs) return lines;
  lines.push('  cost by run');
  // A wide fan-out shows its first delegations and one row for the rest (CLI-6); `delegate-run report` lists every run.
  for (const row of formatRunTable(summary.costs, { maxChildren: SUMMARY_CHILDREN })) lines.push(`    ${row}`);
  return lines;
}
