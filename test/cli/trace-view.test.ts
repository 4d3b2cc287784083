import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../src/cli/read-trace.js';
import type { TraceEventBase } from '../../src/protocol/trace-events.js';
import { TraceView } from '../../src/cli/trace-view.js';
import type { ViewData } from '../../src/viewer/view-data.js';
import { type ExampleName, writeExampleTraces } from '../helpers/example-traces.js';
import { wideTrace } from '../helpers/wide-trace.js';

let traces: Record<ExampleName, string>;

// Four runs of the CLI: generous on a busy machine.
beforeAll(async () => {
  traces = await writeExampleTraces();
}, 120_000);

async function eventsOf(path: string): Promise<TraceEventBase[]> {
  const events: TraceEventBase[] = [];
  for await (const event of readTraceFile(path)) events.push(event);
  return events;
}

function viewOf(events: readonly TraceEventBase[], tierOf?: (model: string) => string | undefined): ViewData {
  const view = new TraceView(tierOf ? { tierOf } : {});
  for (const event of events) view.apply(event);
  return view.view('trace.jsonl');
}

function usageTotalOf(events: readonly TraceEventBase[]): Record<string, number | null> {
  const completed = events.find((event) => event.event === 'run.completed' && event.parent === null) as unknown as {
    usageTotal: Record<string, number | null>;
  };
  return completed.usageTotal;
}

describe('the trace view', () => {
  it('lists every run of the music tree depth first, completed, with its model and figures', async () => {
    const data = viewOf(await eventsOf(traces.music));
    const rows = data.runs.map((run) => [run.name, run.depth, run.status]);
    // The producer's two delegations start in parallel, so either may come first; depth first puts
    // the composer's own delegation right after it.
    const composer = rows.findIndex(([name]) => name === 'composer');
    expect(rows[0]).toEqual(['producer', 0, 'completed']);
    expect(rows.slice(composer, composer + 2)).toEqual([
      ['composer', 1, 'completed'],
      ['sound-designer', 2, 'completed'],
    ]);
    expect(rows.filter((_, index) => index !== 0 && index !== composer && index !== composer + 1)).toEqual([['sound-designer', 1, 'completed']]);
    expect(data.runs[0]?.children).toHaveLength(2);
    expect(data.runs[0]?.modelLabel).toBe('replay:producer.cassette.json');
    expect(data.runs[0]?.own.steps).toBe(2);
    expect(data.runs.every((run) => !run.failedPath)).toBe(true);
  });

  it('totals exactly the top run usageTotal, tokens and dollars, priced as recorded', async () => {
    for (const name of ['music', 'editor', 'costs'] as const) {
      const events = await eventsOf(traces[name]);
      const data = viewOf(events);
      const usageTotal = usageTotalOf(events);
      expect(data.total).toMatchObject({
        inputTokens: usageTotal.inputTokens,
        outputTokens: usageTotal.outputTokens,
        cacheReadTokens: usageTotal.cacheReadTokens,
        costUsd: usageTotal.costUsd,
      });
      expect(data.usageTotal?.costUsd).toBe(usageTotal.costUsd);
    }
  });

  it('groups the cost per model and per tier, the tier of an undelegated run from the catalog', async () => {
    const data = viewOf(await eventsOf(traces.costs), (model) => (model === 'openai:gpt-4.1' ? 'balanced' : undefined));
    expect(data.models.map((group) => [group.key, group.figures.runs])).toEqual([
      ['openai:gpt-4.1', 1],
      ['openai:gpt-4.1-nano', 2],
    ]);
    expect(data.tiers.map((group) => [group.key, group.figures.runs])).toEqual([
      ['balanced', 1],
      ['fast', 2],
    ]);
    const sum = data.models.reduce((total, group) => total + (group.figures.costUsd ?? 0), 0);
    expect(sum).toBeCloseTo(data.total.costUsd ?? -1, 12);
  });

  it('marks the failed run with its code and message, and the path to it', async () => {
    const data = viewOf(await eventsOf(traces.editor));
    const [editor, checker] = data.runs;
    expect(checker).toMatchObject({ name: 'checker', status: 'failed', code: 'invalid_model_output', failedPath: true, tier: 'fast' });
    expect(checker?.message).toMatch(/did not match the Solution schema/);
    expect(editor).toMatchObject({ status: 'completed', failedPath: true });
  });

  it('keeps each attempt of a model call, re-asks included, with what was sent and answered', async () => {
    const data = viewOf(await eventsOf(traces.editor));
    const checker = data.runs[1]?.run;
    const attempts = data.exchanges.filter((exchange) => exchange.run === checker);
    expect(attempts.map((exchange) => [exchange.step, exchange.attempt])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
    ]);
    for (const exchange of attempts) {
      expect(data.events[exchange.request ?? -1]?.event).toBe('model.request');
      expect(data.events[exchange.response ?? -1]?.event).toBe('model.response');
    }
    expect(attempts[0]?.modelLabel).toBe('openai:gpt-4.1-nano');
  });

  it('keeps a provider retry with the attempt under way, not as a re-ask still waiting for its answer (VIEW-5)', () => {
    const data = viewOf(wideTrace(30) as unknown as TraceEventBase[]);
    const attempts = data.exchanges.filter((exchange) => exchange.run === 'run_3');
    expect(attempts.map((exchange) => [exchange.step, exchange.attempt, exchange.retries.length, exchange.response !== null])).toEqual([[0, 0, 1, true]]);
    expect(data.spans.filter((span) => span.kind === 'model' && span.run === 'run_3').map((span) => [span.label, span.status])).toEqual([['step 0', 'ok']]);
  });

  it('labels each delegated run by its call and shows Requests from the top Request’s folder (VIEW-12)', () => {
    const data = viewOf(wideTrace(30) as unknown as TraceEventBase[]);
    expect(data.runs.slice(0, 3).map((run) => [run.name, run.call, run.request])).toEqual([
      ['orchestrator', null, 'orchestrator.json'],
      ['worker', 'worker · {"topic":"tides 0"}', 'workers/worker.json'],
      ['worker', 'worker · {"topic":"glaciers 1"}', 'workers/worker.json'],
    ]);
  });

  it('keeps each call with its events and the child it delegated to', async () => {
    const data = viewOf(await eventsOf(traces.music));
    const compose = data.calls.find((call) => call.tool === 'compose');
    expect(compose?.child).toBe(data.runs.find((run) => run.name === 'composer')?.run);
    expect(compose?.events.map((index) => data.events[index]?.event)).toEqual(['call.started', 'delegate.started', 'delegate.completed', 'call.completed']);
  });

  it('draws a bar per run, model call and call, and the critical path through the delegation that ended last', async () => {
    const events = await eventsOf(traces.music);
    const data = viewOf(events);
    expect(data.spans.filter((span) => span.kind === 'run')).toHaveLength(4);
    expect(data.spans.filter((span) => span.kind === 'model')).toHaveLength(events.filter((event) => event.event === 'model.request').length);
    expect(data.spans.filter((span) => span.kind === 'call')).toHaveLength(events.filter((event) => event.event === 'call.started').length);
    for (const span of data.spans) expect(span.end).toBeGreaterThanOrEqual(span.start);
    // The composer (a run of two steps and a nested delegation) ends after the direct sound designer.
    expect(data.runs.filter((run) => run.critical).map((run) => [run.name, run.depth])).toEqual([
      ['producer', 0],
      ['composer', 1],
      ['sound-designer', 2],
    ]);
    expect(data.spans.filter((span) => span.kind === 'call' && span.critical).map((span) => span.label)).toEqual(['compose 0.0', 'synth 0.1']);
  });

  it('lists approvals with their decisions, who decided, and why', async () => {
    const data = viewOf(await eventsOf(traces.approvals));
    expect(data.approvals).toHaveLength(2);
    for (const approval of data.approvals) {
      expect(approval).toMatchObject({ tool: 'send', decision: 'rejected', by: 'policy:strict' });
      expect(approval.reason).toMatch(/strict mode/);
      expect(approval.params).toMatchObject({ to: expect.any(String) });
    }
  });

  it('shows a trace still being written: runs without an end are running, bars without an end are open', async () => {
    const events = await eventsOf(traces.music);
    const cut = events.findIndex((event) => event.event === 'delegate.completed');
    const data = viewOf(events.slice(0, cut));
    expect(data.runs[0]?.status).toBe('running');
    expect(data.usageTotal).toBeNull();
    expect(data.spans.find((span) => span.kind === 'run' && span.run === data.runs[0]?.run)?.end).toBeNull();
    expect(data.spans.some((span) => span.kind === 'call' && span.status === 'running' && span.end === null)).toBe(true);
  });

  it('shows a run failed with cancelled_by_user as cancelled, on the failed path', () => {
    const at = { run: 'run_top', parent: null, depth: 0 };
    const data = viewOf([
      { ts: '2026-01-01T12:00:00.000Z', event: 'run.started', ...at, request: 'top.json', name: 'top', model: null, input: null } as TraceEventBase,
      { ts: '2026-01-01T12:00:01.000Z', event: 'run.failed', ...at, code: 'cancelled_by_user', message: 'Cancelled.', error: {} } as TraceEventBase,
    ]);
    expect(data.runs[0]).toMatchObject({ status: 'cancelled', code: 'cancelled_by_user', message: 'Cancelled.', failedPath: true });
    expect(data.spans[0]).toMatchObject({ kind: 'run', status: 'cancelled', start: 0, end: 1000 });
  });

  it('holds no runs and no figures for an empty trace', () => {
    const data = viewOf([]);
    expect(data).toMatchObject({ runs: [], spans: [], startedAt: null, durationMs: 0, usageTotal: null, total: { costUsd: 0 } });
  });

  it('keeps the events as they were read', async () => {
    const events = await eventsOf(traces.music);
    expect(viewOf(events).events).toEqual(
      readFileSync(traces.music, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    );
  });
});
