/** Tests of the cost tree and its report (src/cli/cost-tree.ts, src/cli/cost-report.ts): what they read of a trace, and what they leave alone. */
import { describe, expect, it } from 'vitest';
import { costReport } from '../../src/cli/report/cost-report.js';
import { formatRunTable } from '../../src/cli/report/cost-table.js';
import { CostTree } from '../../src/cli/report/cost-tree.js';
import type { TraceEventBase } from '../../src/protocol/trace/events.js';

const at = '2026-01-01T00:00:00.000Z';
const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

function treeOf(events: Array<Record<string, unknown>>): CostTree {
  const tree = new CostTree();
  for (const event of events) tree.apply({ ts: at, ...event } as TraceEventBase);
  return tree;
}

describe('the cost tree', () => {
  it('reads tokens and dollars from model.response only: run.completed usage and delegate.completed usage are not counted', () => {
    const tree = treeOf([
      { event: 'run.started', run: 'p', parent: null, depth: 0, request: '/p.json', name: 'p', model: 'm:a' },
      { event: 'model.response', run: 'p', parent: null, depth: 0, step: 0, model: 'm:a', usage: usage(10), costUsd: 1 },
      { event: 'delegate.started', run: 'p', parent: null, depth: 0, call: '0.0', child: 'c', name: 'c', model: 'm:b', tier: 'fast' },
      { event: 'model.response', run: 'c', parent: 'p', depth: 1, step: 0, model: 'm:b', usage: usage(5), costUsd: 2 },
      { event: 'delegate.completed', run: 'p', parent: null, depth: 0, call: '0.0', child: 'c', usage: { ...usage(999), costUsd: 999 } },
      { event: 'run.completed', run: 'p', parent: null, depth: 0, usage: { ...usage(999), costUsd: 999 }, usageTotal: { ...usage(999), costUsd: 999 } },
      { event: 'my.activity.event', run: 'p', parent: null, depth: 0, usage: usage(999) },
    ]);
    const report = costReport(tree, { price: (answer) => answer.costUsd });
    expect(report.runs.map((cost) => [cost.run.name, cost.run.status, cost.tier, cost.own.inputTokens, cost.own.costUsd, cost.subtree.costUsd])).toEqual([
      ['p', 'done', null, 10, 1, 3],
      ['c', 'done', 'fast', 5, 2, 2],
    ]);
    expect([report.total.inputTokens, report.total.costUsd, report.unfinished]).toEqual([15, 3, []]);
  });

  it('counts every attempt of a queued child whose job was taken over, and says how many there were (QUEUE-8, QUEUE-32)', () => {
    const job = (attempt: number) => ({ event: 'queue.job', run: 'c', parent: 'p', depth: 1, job: 'c', queue: 'q', worker: `h:${attempt}`, attempt });
    const tree = treeOf([
      { event: 'run.started', run: 'p', parent: null, depth: 0, request: '/p.json', name: 'p', model: 'm:a' },
      { event: 'delegate.started', run: 'p', parent: null, depth: 0, call: '0.0', child: 'c', name: 'c', model: 'm:a', tier: null },
      job(1),
      { event: 'model.response', run: 'c', parent: 'p', depth: 1, step: 0, model: 'm:a', usage: usage(100), costUsd: 1 },
      job(2),
      { event: 'model.response', run: 'c', parent: 'p', depth: 1, step: 0, model: 'm:a', usage: usage(100), costUsd: 1 },
      { event: 'run.completed', run: 'c', parent: 'p', depth: 1 },
      { event: 'run.completed', run: 'p', parent: null, depth: 0 },
    ]);
    const report = costReport(tree, { price: (answer) => answer.costUsd });
    expect(report.runs.map((cost) => [cost.run.name, cost.run.attempts, cost.own.inputTokens, cost.own.costUsd])).toEqual([
      ['p', undefined, 0, 0],
      ['c', 2, 200, 2],
    ]);
    const child = formatRunTable(report).find((line) => line.trimStart().startsWith('c '));
    expect(child).toContain('retried: 2 attempts');
    expect(formatRunTable(report).find((line) => line.startsWith('p '))).not.toContain('retried');
  });

  it("attaches a child that starts before its delegate.started, keeps run.started's name and model, and names a run after its file when the trace gives no name", () => {
    const tree = treeOf([
      { event: 'run.started', run: 'p', parent: null, depth: 0, request: '/requests/planner.json', model: 'm:a' },
      { event: 'run.started', run: 'c', parent: 'p', depth: 1, request: 'anonymous:helper', name: 'anonymous:helper', model: 'm:c' },
      { event: 'delegate.started', run: 'p', parent: null, depth: 0, call: '0.0', child: 'c', name: 'other', model: 'm:b', tier: null },
      { event: 'delegate.failed', run: 'p', parent: null, depth: 0, call: '0.0', child: 'c', code: 'worker_error', message: 'x' },
    ]);
    expect(tree.roots.map((run) => run.name)).toEqual(['planner']);
    expect(tree.runs().map((run) => [run.name, run.model, run.status, run.code])).toEqual([
      ['planner', 'm:a', 'unfinished', undefined],
      ['anonymous:helper', 'm:c', 'failed', 'worker_error'],
    ]);
  });

  it('counts a re-asked step once, labels a run by every model that answered it, and names the tier from the catalog when it was not delegated at one', () => {
    const tree = treeOf([
      { event: 'model.response', run: 'p', parent: null, depth: 0, step: 0, model: 'm:a', usage: usage(1), costUsd: 0 },
      { event: 'model.response', run: 'p', parent: null, depth: 0, step: 0, model: 'replay:/c.json', replayOf: 'm:b', usage: usage(1), costUsd: null },
      { event: 'model.response', run: 'p', parent: null, depth: 0, step: 1, model: 'm:a', usage: usage(1), costUsd: 0 },
    ]);
    const report = costReport(tree, { price: (answer) => answer.costUsd, tierOf: (model) => (model === 'm:a' ? 'deep' : undefined) });
    expect(report.runs[0]).toMatchObject({ model: 'm:a, m:b', tier: 'deep', own: { steps: 2, inputTokens: 3, costUsd: null, replayed: true } });
    expect(report.models.map((group) => [group.key, group.tally.steps, group.tally.costUsd, group.tally.replayed])).toEqual([
      ['m:a', 2, 0, false],
      ['m:b', 1, null, true],
    ]);
  });
});
