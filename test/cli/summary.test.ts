/** Tests of the end-of-run summary (src/cli/summary.ts). */
import { describe, expect, it } from 'vitest';
import { costReport } from '../../src/cli/report/cost-report.js';
import { formatRunTable } from '../../src/cli/report/cost-table.js';
import { CostTree } from '../../src/cli/report/cost-tree.js';
import { SUMMARY_CHILDREN, formatCount, formatSummary, previewOutput, summarize, type RunOutcome } from '../../src/cli/progress/summary.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { hasAnsi } from './fake-terminal.js';
import { musicEvents } from './music-events.js';

/** The cost report the progress view builds: each answer as the run priced it. */
function costsOf(events: TraceEvent[]) {
  const tree = new CostTree();
  for (const event of events) tree.apply(event);
  return costReport(tree, { price: (answer) => answer.costUsd, tierOf: (model) => (model === 'openai:gpt-4.1' ? 'balanced' : undefined) });
}

/** The music trace as a live run would write it: every answer from openai:gpt-4.1, none replayed. */
const liveMusicEvents = musicEvents.map((event) => (event.event === 'model.response' ? { ...event, model: 'openai:gpt-4.1' } : event));

const finalEvent = musicEvents[musicEvents.length - 1]!;
const usageTotal = finalEvent.usageTotal as UsageSummary;
const succeeded: RunOutcome = { ok: true, output: finalEvent.output, usageTotal };

/** The music trace with the direct sound-designer failing instead of completing. */
function withFailingSoundDesigner(): TraceEvent[] {
  return musicEvents.flatMap((event): TraceEvent[] => {
    if (event.event === 'run.completed' && event.run === 'run_sound_direct') {
      return [
        {
          ts: event.ts,
          event: 'run.failed',
          run: event.run,
          parent: event.parent,
          depth: event.depth,
          code: 'activity_error',
          message: 'The synth is broken.',
        },
      ];
    }
    if (event.event === 'delegate.completed' && event.child === 'run_sound_direct') {
      return [
        {
          ts: event.ts,
          event: 'delegate.failed',
          run: event.run,
          parent: event.parent,
          depth: event.depth,
          call: event.call,
          child: event.child,
          code: 'activity_error',
          message: 'The synth is broken.',
        },
      ];
    }
    return [event];
  });
}

describe('summary', () => {
  it("gives the outcome, the whole tree's tokens, cost, steps and tool calls, and where the dollars went run by run", () => {
    const lines = formatSummary(summarize(succeeded, costsOf(liveMusicEvents)));
    expect(lines.slice(0, 4)).toEqual([
      '✓ producer done in 1.9s · output: {"title":"Rain on Empty Streets"}',
      '  tokens 3,515 in · 514 out · cache 0 read · 0 written',
      '  cost $0.0104 · 4 runs · 6 steps · 4 tool calls',
      '  cost by run',
    ]);
    expect(lines.slice(4)).toEqual([
      '    run                  model           tier      steps  input  output  cache read  cache write     cost',
      '    producer             openai:gpt-4.1  balanced      2  1,820     208           0            0  $0.0056',
      '      composer           openai:gpt-4.1  balanced      2  1,280     170           0            0  $0.0035',
      '        sound-designer   openai:gpt-4.1  balanced      1    210      70           0            0  $0.0007',
      '      composer subtotal  2 runs                        3  1,490     240           0            0  $0.0042',
      '      sound-designer     openai:gpt-4.1  balanced      1    205      66           0            0  $0.0006',
      '    total                4 runs                        6  3,515     514           0            0  $0.0104',
    ]);
    expect(hasAnsi(lines.join('\n'))).toBe(false);
  });

  it('takes steps and tool calls from usageTotal, which counts the whole tree (LOOP-15)', () => {
    const summary = summarize(succeeded, costsOf(musicEvents));
    expect(summary).toMatchObject({ ok: true, tokens: { inputTokens: 3515, outputTokens: 514 }, costUsd: 0.0104, runs: 4, steps: 6, toolCalls: 4 });
    expect(summary.costs?.runs.map((cost) => [cost.run.name, cost.run.depth, cost.own.steps, cost.subtree.steps])).toEqual([
      ['producer', 0, 2, 6],
      ['composer', 1, 2, 3],
      ['sound-designer', 2, 1, 1],
      ['sound-designer', 1, 1, 1],
    ]);
  });

  it('marks replayed costs as replayed, in the total and on every row they price (CAS-14)', () => {
    const lines = formatSummary(summarize(succeeded, costsOf(musicEvents)));
    expect(lines[2]).toBe('  cost $0.0104 (replayed) · 4 runs · 6 steps · 4 tool calls');
    expect(lines.at(-1)).toBe(
      '    total                4 runs                                   6  3,515     514           0            0  $0.0104 (replayed)',
    );
    expect(lines.slice(5).every((line) => line.endsWith('(replayed)'))).toBe(true);
  });

  it('marks a failed delegate with its code, and keeps counting what it used', () => {
    const failure: RunOutcome = { ok: false, error: { code: 'worker_error', message: 'The delegate "sound-designer" failed.' }, usageTotal };
    const events = withFailingSoundDesigner();
    const lines = formatSummary(summarize(failure, costsOf(events)));
    expect(lines[0]).toBe('✗ producer failed after 1.9s: worker_error');
    expect(lines.at(-2)).toMatch(/^ {6}✗ sound-designer +replay:producer\.cassette\.json +- +1 +205 +66 +0 +0 +\$0\.0006 \(replayed\) {2}activity_error$/);
  });

  it('says $? and why when some model has no known price, and shows no table for a run that did not delegate', () => {
    const cancelled: RunOutcome = {
      ok: false,
      error: { code: 'cancelled_by_user', message: 'The run was cancelled.' },
      usageTotal: { ...usageTotal, costUsd: null },
    };
    const alone = musicEvents.filter((event) => event.run === 'run_producer' && !String(event.event).startsWith('delegate.'));
    const lines = formatSummary(summarize(cancelled, costsOf(alone)));
    expect(lines[0]).toBe('⊘ producer cancelled after 1.9s: cancelled_by_user');
    expect(lines[2]).toBe('  cost $? (replayed) (some model has no known price) · 1 run · 6 steps · 4 tool calls');
    expect(lines).toHaveLength(3);
  });

  it("folds a parent's delegations past the twentieth that ended well into one summed row, and keeps every failed one (CLI-6)", () => {
    const ts = '2026-11-23T10:00:00.000Z';
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const base = (run: string, parent: string | null, depth: number) => ({ ts, run, parent, depth });
    const events: TraceEvent[] = [
      { ...base('top', null, 0), event: 'run.started', request: 'top.json', name: 'top', model: 'openai:gpt-4.1', input: null },
      { ...base('top', null, 0), event: 'model.response', step: 0, attempt: 0, solution: {}, model: 'openai:gpt-4.1', usage, costUsd: 0.5, ms: 1 },
    ];
    for (let index = 0; index < 30; index++) {
      const child = `w${index}`;
      const failed = index === 25;
      events.push(
        { ...base(child, 'top', 1), event: 'run.started', request: 'worker.json', name: `worker-${index}`, model: 'openai:gpt-4.1-mini', input: null },
        { ...base(child, 'top', 1), event: 'model.response', step: 0, attempt: 0, solution: {}, model: 'openai:gpt-4.1-mini', usage, costUsd: 0.01, ms: 1 },
        failed
          ? { ...base(child, 'top', 1), event: 'run.failed', code: 'activity_error', message: 'Broken.', error: {} }
          : { ...base(child, 'top', 1), event: 'run.completed', output: 'ok', usage: {}, usageTotal: {} },
      );
    }
    events.push({ ...base('top', null, 0), event: 'run.completed', output: 'done', usage: {}, usageTotal: {} });
    const report = costsOf(events);
    const table = formatSummary(summarize({ ...succeeded, usageTotal: { ...usageTotal, costUsd: 0.8 } }, report)).slice(4);
    const names = table.map((line) => line.trim().split(/ {2,}/)[0]);
    expect(SUMMARY_CHILDREN).toBe(20);
    expect(names).toEqual(['run', 'top', ...Array.from({ length: 20 }, (_, index) => `worker-${index}`), '✗ worker-25', '… 9 more runs', 'total']);
    // The folded row sums the nine that ended well; the total still counts all 31 runs.
    expect(table.at(-2)).toMatch(/… 9 more runs +9 +90 +45 +0 +0 +\$0\.0900$/);
    expect(table.at(-1)).toMatch(/total +31 runs +31 +310 +155 +0 +0 +\$0\.80\d*$/);
    // delegate-run report's table lists every run.
    expect(formatRunTable(report).filter((line) => line.includes('worker-'))).toHaveLength(30);
  });

  it('colours only when asked', () => {
    const lines = formatSummary(summarize(succeeded, costsOf(musicEvents)), { color: true });
    expect(lines[0]).toMatch(/^\u001b\[32m✓\u001b\[39m \u001b\[1mproducer done in 1\.9s\u001b\[22m/);
  });

  it('previews an output in one short line and groups thousands', () => {
    expect(previewOutput('first line\nsecond line')).toBe('first line');
    expect(previewOutput({ text: 'x'.repeat(100) })).toHaveLength(60);
    expect(previewOutput({ text: 'x'.repeat(100) }).endsWith('…')).toBe(true);
    expect([formatCount(0), formatCount(999), formatCount(1234567)]).toEqual(['0', '999', '1,234,567']);
  });
});
