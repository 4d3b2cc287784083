/** One set of numbers for a resumed journal (spec/journal.md JOURNAL-12, spec/cli.md CLI-4, CLI-6, CLI-17, CLI-28): the built binary killed mid-tree, resumed, and its summary, --json, report and viewer data compared. */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ViewData } from '../../src/viewer/view-data.js';
import { exited, readJournal, runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';

/** The pitch-deck example in a fresh folder, each cassette answer held a little, so a kill lands between the tree's events. */
function slowDeck(): string {
  const folder = join(tempDir(), 'deck');
  cpSync('requests/pitch-deck', folder, { recursive: true });
  const path = join(folder, 'orchestrator.cassette.json');
  const cassette = JSON.parse(readFileSync(path, 'utf8')) as { entries: Record<string, unknown>[] };
  for (const entry of cassette.entries) entry.delayMs = 150;
  writeFileSync(path, JSON.stringify(cassette));
  return folder;
}

/** The figures of the summary's cost line and of its table's total row. */
function summaryFigures(stderr: string) {
  const tokens = /tokens ([\d,]+) in · ([\d,]+) out/.exec(stderr);
  const cost = /cost (\$[\d.?]+)(?: \(replayed\))? · (\d+) runs? · (\d+) steps?/.exec(stderr);
  const total = /^\s+total\s+(\d+) runs\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+[\d,]+\s+[\d,]+\s+(\$[\d.?]+)/m.exec(stderr);
  if (!tokens || !cost || !total) throw new Error(`The summary lacks its figures:\n${stderr}`);
  const count = (text: string | undefined) => Number((text ?? '').replaceAll(',', ''));
  return {
    headline: { inputTokens: count(tokens[1]), outputTokens: count(tokens[2]), cost: cost[1], runs: count(cost[2]), steps: count(cost[3]) },
    table: { runs: count(total[1]), steps: count(total[2]), inputTokens: count(total[3]), outputTokens: count(total[4]), cost: total[5] },
  };
}

/** The cost as the text outputs print it (CLI-28): 4 decimals below $1. */
function inText(costUsd: number): string {
  return `$${costUsd.toFixed(4)}`;
}

describe('a resumed journal gives one set of numbers (JOURNAL-12)', () => {
  it('the summary, --json, delegate-run report and the viewer data agree on runs, steps, tokens and cost, rounded as CLI-28 says', async () => {
    const folder = slowDeck();
    const journal = join(folder, 'run.jsonl');
    const first = startCli([join(folder, 'orchestrator.json'), '--journal', journal]);
    await Promise.race([waitFor(() => readJournal(journal).length >= 20, 30_000), first.done]);
    first.child.kill('SIGKILL');
    await exited(first.done, 'the killed run');
    const atKill = readJournal(journal);
    expect(
      atKill.some((event) => event.event === 'run.completed' && event.parent === null),
      'the kill came after the tree ended',
    ).toBe(false);
    // The same cut journal, resumed once for the summary and once for --json.
    const copy = join(folder, 'copy.jsonl');
    writeFileSync(copy, readFileSync(journal));

    const resumed = await runCli(['--resume', journal]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = summaryFigures(resumed.stderr);
    const json = await runCli(['--resume', copy, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const usage = JSON.parse(json.stdout).usage;
    const report = await runCli(['report', journal, '--json']);
    expect(report.code, report.stderr).toBe(0);
    const total = JSON.parse(report.stdout).total;
    const page = join(folder, 'view.html');
    const viewed = await runCli(['view', journal, '--out', page]);
    expect(viewed.code, viewed.stderr).toBe(0);
    const data = JSON.parse(/<script type="application\/json" id="trace-data">(.*?)<\/script>/s.exec(readFileSync(page, 'utf8'))?.[1] ?? '') as ViewData;

    // The whole journal's work: the first attempt's answers and the resumed session's, each once.
    const answers = readJournal(journal).filter((event) => event.event === 'model.response');
    const inputTokens = answers.reduce((sum, event) => sum + (event.usage as { inputTokens: number }).inputTokens, 0);
    const runs = new Set(readJournal(journal).flatMap((event) => (event.event === 'run.started' ? [event.run] : []))).size;
    expect(runs).toBeGreaterThan(1);
    for (const figures of [summary.headline, summary.table, usage, total, data.total]) expect(figures.inputTokens).toBe(inputTokens);
    for (const figures of [summary.headline, summary.table, usage, total, data.total]) expect(figures.runs ?? total.runs).toBe(runs);
    const steps = usage.steps;
    for (const figures of [summary.headline, summary.table, total, data.total]) expect(figures.steps).toBe(steps);
    for (const figures of [summary.table, total, data.total]) expect(figures.outputTokens).toBe(usage.outputTokens);
    expect(summary.headline.outputTokens).toBe(usage.outputTokens);
    // Money: one amount, JSON rounded to 10 decimals, text to 4.
    expect(total.costUsd).toBe(usage.costUsd);
    expect(data.total.costUsd).toBe(usage.costUsd);
    expect(String(usage.costUsd)).toMatch(/^\d+(\.\d{1,10})?$/);
    expect(summary.headline.cost).toBe(inText(usage.costUsd));
    expect(summary.table.cost).toBe(inText(usage.costUsd));
  }, 120_000);
});
