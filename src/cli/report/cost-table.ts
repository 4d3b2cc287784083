/** The cost report as text (spec/cli.md CLI-17): a row per run with subtotals per parent and a total, or a row per group; `delegate-run report` and the end-of-run summary print it alike. */
import { type CostReport, type GroupCost, type ReportGrouping, type RunCost, type Tally, addTally, emptyTally, parentsOf } from './cost-report.js';
import type { CostRunStatus } from './cost-tree.js';
import { formatCount, table } from './text-table.js';
import { formatCost, formatModel } from '../progress/tree-renderer.js';

const FIGURE_HEADINGS = ['steps', 'input', 'output', 'cache read', 'cache write', 'cost'];

/** A run that did not end well is marked before its name. */
const STATUS_MARKS: Record<CostRunStatus, string> = { done: '', failed: '✗ ', cancelled: '⊘ ', unfinished: '… ' };

/** A cost, marked when a replay cassette gave some of the answers it prices (CAS-14). */
export function formatTallyCost(tally: Pick<Tally, 'costUsd' | 'replayed'>): string {
  return `${formatCost(tally.costUsd)}${tally.replayed ? ' (replayed)' : ''}`;
}

function figureCells(tally: Tally): string[] {
  return [
    formatCount(tally.steps),
    formatCount(tally.inputTokens),
    formatCount(tally.outputTokens),
    formatCount(tally.cacheReadTokens),
    formatCount(tally.cacheWriteTokens),
    formatTallyCost(tally),
  ];
}

function plural(count: number, word: string): string {
  return `${formatCount(count)} ${word}${count === 1 ? '' : 's'}`;
}

/** Right-aligned columns: the figures that follow the `first` label columns. */
function figureColumns(first: number): Set<number> {
  return new Set(FIGURE_HEADINGS.map((_, index) => first + index));
}

/** How a run table is cut down. */
export interface RunTableOptions {
  /**
   * The delegations of one parent shown before the rest of those that ended well are folded into
   * one row, `… N more runs`, that sums their subtrees (the end-of-run summary, CLI-6); default:
   * every one is shown.
   */
  maxChildren?: number;
}

/**
 * One row per run, indented by depth under its parent, with model, tier, steps, tokens and cost;
 * after each parent's delegations, its subtotal (itself and its whole subtree); last the total.
 * A run that failed, was cancelled or never ended is marked and says why in the last column, where a
 * queued child whose job took more than one attempt says how many.
 */
export function formatRunTable(report: CostReport, options: RunTableOptions = {}): string[] {
  const maxChildren = options.maxChildren ?? Number.POSITIVE_INFINITY;
  const top = Math.min(...report.roots.map((root) => root.run.depth));
  const rows: string[][] = [['run', 'model', 'tier', ...FIGURE_HEADINGS, '']];
  const soleRoot = report.roots.length === 1 ? report.roots[0] : undefined;
  const visit = (cost: RunCost) => {
    const indent = '  '.repeat(cost.run.depth - top);
    const ended = cost.run.status === 'unfinished' ? 'unfinished' : (cost.run.code ?? '');
    // A queued child whose job was taken over paid for every attempt's answers (QUEUE-32): said, so the figures add up.
    const why = [ended, cost.run.attempts === undefined ? '' : `retried: ${cost.run.attempts} attempts`].filter(Boolean).join(', ');
    const model = cost.models.length > 0 ? cost.models.map(formatModel).join(', ') : formatModel(cost.model);
    rows.push([`${indent}${STATUS_MARKS[cost.run.status]}${cost.run.name}`, model, cost.tier ?? '-', ...figureCells(cost.own), why]);
    // A delegation that did not end well is always shown, whatever its place.
    const folded = cost.children.filter((child, index) => index >= maxChildren && child.run.status === 'done');
    const hidden = new Set(folded);
    for (const child of cost.children) if (!hidden.has(child)) visit(child);
    if (folded.length > 0) {
      // What the folded delegations hold, their subtrees summed; the parent's subtotal stays whole.
      const sum = folded.reduce((tally, child) => addTally(tally, child.subtree), emptyTally());
      rows.push([`${indent}  … ${plural(sum.runs, 'more run')}`, '', '', ...figureCells(sum), '']);
    }
    // The sole top run's subtotal is the total, printed once below.
    if (cost.children.length > 0 && cost !== soleRoot)
      rows.push([`${indent}${cost.run.name} subtotal`, plural(cost.subtree.runs, 'run'), '', ...figureCells(cost.subtree), '']);
  };
  for (const root of report.roots) visit(root);
  rows.push(['total', plural(report.total.runs, 'run'), '', ...figureCells(report.total), '']);
  return table(rows, figureColumns(3));
}

/** One row per group (`model` or `tier`; `-` for runs with no tier), or per parent (its subtree, indented by depth), then the total. */
export function formatGroupTable(report: CostReport, by: Exclude<ReportGrouping, 'run'>): string[] {
  const rows: string[][] = [[by, 'runs', ...FIGURE_HEADINGS]];
  if (by === 'parent') {
    const top = Math.min(...report.roots.map((root) => root.run.depth));
    for (const { run, subtree } of parentsOf(report))
      rows.push([`${'  '.repeat(run.depth - top)}${run.name}`, formatCount(subtree.runs), ...figureCells(subtree)]);
  } else {
    const groups: GroupCost[] = by === 'model' ? report.models : report.tiers;
    for (const { key, tally } of groups) rows.push([by === 'model' ? formatModel(key) : (key ?? '-'), formatCount(tally.runs), ...figureCells(tally)]);
  }
  rows.push(['total', formatCount(report.total.runs), ...figureCells(report.total)]);
  return table(rows, figureColumns(2).add(1));
}
