/** Where the dollars went: a cost tree priced answer by answer, as rows per run with subtotals per parent, or grouped by model, tier or parent (spec/cli.md CLI-17). */
import { type Usage, type UsageSummary, addCost, addUsage, zeroUsage } from '../protocol/usage.js';
import { type CostAnswer, type CostRun, type CostTree, answerModel, isReplayed } from './cost-tree.js';

/** Sums over some answers: tokens, dollars, steps, runs, and whether any answer was replayed. */
export interface Tally extends Usage {
  /** Runs that gave at least one of the answers (for a run's own tally: 1). */
  runs: number;
  /** Steps with an answer; a re-asked step counts once (LOOP-8). */
  steps: number;
  /** `null` when any answer in it has no known price: never 0 for unknown. */
  costUsd: number | null;
  /** Some answer in it came from a replay cassette (CAS-14). */
  replayed: boolean;
}

/** One run of the report: its own figures, and its subtree's (itself and every descendant). */
export interface RunCost {
  run: CostRun;
  /** The model its answers were priced as, several joined by `, `; without answers, the model it was started with. */
  model: string | null;
  /** The models its answers were priced as, in order of first answer. */
  models: string[];
  /** The tier it was delegated at, else the catalog's tier of its model, else `null`. */
  tier: string | null;
  own: Tally;
  subtree: Tally;
  /** Its delegations' reports, in the order they started. */
  children: RunCost[];
}

/** Figures grouped under one key (a model or a tier). */
export interface GroupCost {
  key: string | null;
  tally: Tally;
}

/** A priced cost tree. */
export interface CostReport {
  /** The top runs (normally one), each with its delegations beneath. */
  roots: RunCost[];
  /** Every run, depth first. */
  runs: RunCost[];
  /** Answers grouped by the model they were priced as, in order of first use. */
  models: GroupCost[];
  /** Runs grouped by tier, in order of first use. */
  tiers: GroupCost[];
  /** The whole trace: the top run's subtree. */
  total: Tally;
  /** Runs the trace shows no end of (a truncated trace). */
  unfinished: CostRun[];
}

/** How a report prices answers and labels tiers. */
export interface CostReportOptions {
  /** The cost of an answer: re-priced with a model catalog (the report), or as recorded (the summary). */
  price(answer: CostAnswer): number | null;
  /** The catalog's tier of a model, for runs not delegated at a tier. */
  tierOf?(model: string): string | undefined;
}

/** A tally of nothing. */
export function emptyTally(): Tally {
  return tallyOf(zeroUsage(), 0, 0, 0, false);
}

/** A tally of `usage` and the rest; built field by field, as a report of a thousand runs makes thousands of them. */
function tallyOf(usage: Usage, runs: number, steps: number, costUsd: number | null, replayed: boolean): Tally {
  const tally: Tally = {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    runs,
    steps,
    costUsd,
    replayed,
  };
  if (usage.reasoningTokens !== undefined) tally.reasoningTokens = usage.reasoningTokens;
  return tally;
}

/** Adds two tallies; an unknown cost makes the sum unknown. */
export function addTally(a: Tally, b: Tally): Tally {
  return tallyOf(addUsage(a, b), a.runs + b.runs, a.steps + b.steps, addCost(a.costUsd, b.costUsd), a.replayed || b.replayed);
}

/**
 * Adds `more` into `sum`, a tally this module has just made and nobody else holds: a report of a
 * thousand runs sums thousands of tallies, and one new object per addition was most of its cost.
 */
function addInto(sum: Tally, more: Tally): void {
  sum.inputTokens += more.inputTokens;
  sum.outputTokens += more.outputTokens;
  sum.cacheReadTokens += more.cacheReadTokens;
  sum.cacheWriteTokens += more.cacheWriteTokens;
  if (more.reasoningTokens !== undefined) sum.reasoningTokens = (sum.reasoningTokens ?? 0) + more.reasoningTokens;
  sum.runs += more.runs;
  sum.steps += more.steps;
  sum.costUsd = addCost(sum.costUsd, more.costUsd);
  sum.replayed ||= more.replayed;
}

/** A new tally of `tally`'s figures, summed from nothing as every other sum here is. */
function fromZero(tally: Tally): Tally {
  const sum = emptyTally();
  addInto(sum, tally);
  return sum;
}

/** The tally of some answers of one run, each priced once; a re-asked step counts once (LOOP-8). */
function tallyAnswers(answers: readonly CostAnswer[], prices: ReadonlyMap<CostAnswer, number | null>): Tally {
  const tally = emptyTally();
  // A run's steps come in order, so new steps are counted as they rise; a set of them is made
  // only when a step comes back after a later one.
  let steps = 0;
  let last = Number.NEGATIVE_INFINITY;
  let seen: Set<number> | undefined;
  for (let index = 0; index < answers.length; index++) {
    const answer = answers[index] as CostAnswer;
    const usage = answer.usage;
    tally.inputTokens += usage.inputTokens;
    tally.outputTokens += usage.outputTokens;
    tally.cacheReadTokens += usage.cacheReadTokens;
    tally.cacheWriteTokens += usage.cacheWriteTokens;
    if (usage.reasoningTokens !== undefined) tally.reasoningTokens = (tally.reasoningTokens ?? 0) + usage.reasoningTokens;
    tally.costUsd = addCost(tally.costUsd, prices.get(answer) ?? null);
    tally.replayed ||= isReplayed(answer);
    const step = answer.step;
    if (seen) seen.add(step);
    else if (step > last) {
      steps += 1;
      last = step;
    } else if (step < last) seen = new Set(answers.slice(0, index + 1).map((one) => one.step));
  }
  tally.runs = answers.length > 0 ? 1 : 0;
  tally.steps = seen ? seen.size : steps;
  return tally;
}

/** The labels of a run: the model(s) its answers were priced as, and its tier. */
function labels(run: CostRun, options: CostReportOptions): { model: string | null; models: string[]; tier: string | null } {
  const models: string[] = [];
  for (const answer of run.answers) {
    const model = answerModel(answer);
    if (!models.includes(model)) models.push(model);
  }
  const model = models.length > 0 ? models.join(', ') : run.model;
  const first = models[0] ?? run.model;
  const tier = run.tier ?? (first === null ? undefined : options.tierOf?.(first)) ?? null;
  return { model, models, tier };
}

/**
 * Prices a cost tree. Every answer is priced once with `options.price`; a run's subtree sums its own
 * answers and then its children's subtrees in order, as the runtime sums `usageTotal` (DEL-17), so
 * the report's total is the top run's `usageTotal` when priced alike.
 */
export function costReport(tree: CostTree, options: CostReportOptions): CostReport {
  const prices = new Map<CostAnswer, number | null>();
  const runs: RunCost[] = [];
  const build = (run: CostRun): RunCost => {
    for (const answer of run.answers) prices.set(answer, options.price(answer));
    const own = tallyAnswers(run.answers, prices);
    own.runs = 1;
    const { model, models, tier } = labels(run, options);
    const cost: RunCost = { run, model, models, tier, own, subtree: own, children: [] };
    runs.push(cost);
    const children = tree.childrenOf(run);
    if (children.length === 0) return cost;
    const descendants = emptyTally();
    for (const child of children) {
      const childCost = build(child);
      cost.children.push(childCost);
      addInto(descendants, childCost.subtree);
    }
    cost.subtree = addTally(own, descendants);
    return cost;
  };
  const roots = tree.roots.map(build);
  // 0 + x is x exactly, so a single top run's total is its subtree to the last digit.
  const total = emptyTally();
  for (const root of roots) addInto(total, root.subtree);
  return {
    roots,
    runs,
    models: groupAnswers(runs, prices),
    tiers: groupRuns(runs),
    total,
    unfinished: runs.filter((cost) => cost.run.status === 'unfinished').map((cost) => cost.run),
  };
}

/** Answers grouped by the model they were priced as; `runs` counts the runs among them. */
function groupAnswers(runs: readonly RunCost[], prices: ReadonlyMap<CostAnswer, number | null>): GroupCost[] {
  const groups = new Map<string, Tally>();
  const add = (model: string, tally: Tally) => {
    const group = groups.get(model);
    if (group) addInto(group, tally);
    else groups.set(model, fromZero(tally));
  };
  for (const { run, own, models } of runs) {
    // A run priced as one model adds its own tally whole; only a run of several models is split.
    if (models.length === 1) add(models[0] as string, own);
    else
      for (const model of models)
        add(
          model,
          tallyAnswers(
            run.answers.filter((answer) => answerModel(answer) === model),
            prices,
          ),
        );
  }
  return [...groups].map(([key, tally]) => ({ key, tally }));
}

/** Runs grouped by their tier label. */
function groupRuns(runs: readonly RunCost[]): GroupCost[] {
  const groups = new Map<string | null, Tally>();
  for (const cost of runs) {
    const group = groups.get(cost.tier);
    if (group) addInto(group, cost.own);
    else groups.set(cost.tier, fromZero(cost.own));
  }
  return [...groups].map(([key, tally]) => ({ key, tally }));
}

/** How `--by` groups the rows. */
export type ReportGrouping = 'run' | 'model' | 'tier' | 'parent';

/** The groupings, in the order the usage text lists them. */
export const REPORT_GROUPINGS: readonly ReportGrouping[] = ['run', 'model', 'tier', 'parent'];

/**
 * The decimals of a dollar amount in JSON output (spec/cli.md CLI-28). A price per million tokens
 * with up to four decimals makes every amount a whole multiple of 1e-10 dollars, so rounding there
 * gives the exact amount whichever order its answers were summed in: every output prints one number.
 */
export const JSON_COST_DECIMALS = 10;

/**
 * A dollar amount as JSON output gives it (CLI-28): rounded to {@link JSON_COST_DECIMALS}, so sums
 * of prices print as `0.001224`, never `0.0012240000000000003`; unknown stays `null`. Only outputs
 * round: sums are taken at full precision.
 */
export function jsonCost(costUsd: number | null): number | null {
  if (costUsd === null) return null;
  const scale = 10 ** JSON_COST_DECIMALS;
  return Math.round(costUsd * scale) / scale;
}

/** `--json`'s `usage` (CLI-4): the top run's `usageTotal` with its cost rounded (CLI-28) and the tree's runs as the summary and the report count them. */
export function jsonUsage(usageTotal: UsageSummary, runs: number): UsageSummary & { runs: number } {
  return { ...usageTotal, costUsd: jsonCost(usageTotal.costUsd), runs };
}

/** The figures every JSON row and the total carry (and the trace viewer's, VIEW-4); the cost as JSON gives it (CLI-28). */
export function tallyFigures(tally: Tally) {
  return {
    steps: tally.steps,
    inputTokens: tally.inputTokens,
    outputTokens: tally.outputTokens,
    cacheReadTokens: tally.cacheReadTokens,
    cacheWriteTokens: tally.cacheWriteTokens,
    costUsd: jsonCost(tally.costUsd),
  };
}

/** The runs that delegated, each with its subtree: the subtotals per parent. */
export function parentsOf(report: CostReport): RunCost[] {
  return report.runs.filter((cost) => cost.children.length > 0);
}

/** The report as `--json` prints it: `{rows, total}` (CLI-17). */
export function reportJson(report: CostReport, by: ReportGrouping): { rows: Record<string, unknown>[]; total: Record<string, unknown> } {
  const rows = (() => {
    switch (by) {
      case 'run':
        return report.runs.map(({ run, model, tier, own }) => ({
          run: run.run,
          parent: run.parent,
          depth: run.depth,
          name: run.name,
          model,
          tier,
          ...tallyFigures(own),
        }));
      case 'model':
        return report.models.map(({ key, tally }) => ({ model: key, runs: tally.runs, ...tallyFigures(tally) }));
      case 'tier':
        return report.tiers.map(({ key, tally }) => ({ tier: key, runs: tally.runs, ...tallyFigures(tally) }));
      case 'parent':
        return parentsOf(report).map(({ run, subtree }) => ({
          parent: run.run,
          name: run.name,
          depth: run.depth,
          runs: subtree.runs,
          ...tallyFigures(subtree),
        }));
    }
  })();
  return { rows, total: { runs: report.total.runs, ...tallyFigures(report.total) } };
}
