/** Tests of `delegate-run report` (src/cli/report.ts, spec/cli.md CLI-17): the cost tree of a trace, priced from its model answers alone. */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportMain } from '../../src/cli/report/report.js';
import { main } from '../../src/cli/run.js';
import { folderWith, readTrace, runCli, tempDir } from '../helpers/cli.js';
import { fakePipe } from './fake-terminal.js';

const fixtures = resolve('test/fixtures/costs');

/** What the maintained price source (MODEL-18) charges for an answer of an OpenAI model: its own figure, not one copied here. */
function sourcePrice(model: string, inputTokens: number, outputTokens: number, cacheReadTokens = 0): number {
  const priced = calcPrice({ input_tokens: inputTokens + cacheReadTokens, cache_read_tokens: cacheReadTokens, output_tokens: outputTokens }, model, {
    providerId: 'openai',
  });
  if (!priced) throw new Error(`genai-prices does not price ${model}`);
  return priced.total_price;
}
const PLANNER_STEP_0 = sourcePrice('gpt-4.1', 1200, 300, 400);
const PLANNER_STEP_1 = sourcePrice('gpt-4.1', 1500, 50);
const OUTLINE = sourcePrice('gpt-4.1-nano', 500, 200);
const POLISH = sourcePrice('gpt-4.1-nano', 700, 100);

interface JsonReport {
  rows: Record<string, unknown>[];
  total: Record<string, unknown>;
}

/** Runs the report in process; resolves with its status and what it wrote. */
async function report(args: string[], env: Record<string, string | undefined> = {}) {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await reportMain(args, { stdout, stderr, env, cwd: fixtures });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

async function jsonReport(args: string[], env: Record<string, string | undefined> = {}): Promise<JsonReport> {
  const { status, stdout, stderr } = await report([...args, '--json'], env);
  expect(status, stderr).toBe(0);
  expect(stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(stdout) as JsonReport;
}

let trace: string;
let result: { usage: Record<string, number | null>; run: string };

beforeAll(async () => {
  // The planner fans two sub-tasks out to a worker on the fast tier; the cassette names each answer's model.
  trace = join(tempDir('report-'), 'trace.jsonl');
  const stdout = fakePipe();
  const status = await main([join(fixtures, 'planner.json'), '--trace', trace, '--json', '--quiet'], { stdout, stderr: fakePipe(), env: {}, cwd: fixtures });
  expect(status).toBe(0);
  result = JSON.parse(stdout.text());
});

describe('delegate-run report', () => {
  it('gives one row per run with its parent, depth, name, model, tier, steps, tokens and dollars, and a total equal to usageTotal', async () => {
    const printed = await jsonReport([trace]);
    const top = result.run;
    expect(printed.rows.map((row) => Object.keys(row))).toEqual(
      Array(3).fill([
        'run',
        'parent',
        'depth',
        'name',
        'model',
        'tier',
        'steps',
        'inputTokens',
        'outputTokens',
        'cacheReadTokens',
        'cacheWriteTokens',
        'costUsd',
      ]),
    );
    // The workers run in parallel: their rows come in the order they started, which may be either.
    printed.rows.splice(1, 2, ...printed.rows.slice(1).sort((a, b) => (a.inputTokens as number) - (b.inputTokens as number)));
    expect(printed.rows.map(({ run, costUsd, ...rest }) => rest)).toEqual([
      {
        parent: null,
        depth: 0,
        name: 'planner',
        model: 'openai:gpt-4.1',
        tier: 'balanced',
        steps: 2,
        inputTokens: 2700,
        outputTokens: 350,
        cacheReadTokens: 400,
        cacheWriteTokens: 0,
      },
      ...[
        [500, 200],
        [700, 100],
      ].map(([inputTokens, outputTokens]) => ({
        parent: top,
        depth: 1,
        name: 'worker',
        model: 'openai:gpt-4.1-nano',
        tier: 'fast',
        steps: 1,
        inputTokens,
        outputTokens,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      })),
    ]);
    expect(printed.rows[0]?.run).toBe(top);
    expect(printed.rows[0]?.costUsd).toBeCloseTo(PLANNER_STEP_0 + PLANNER_STEP_1, 15);
    expect(printed.rows[1]?.costUsd).toBeCloseTo(OUTLINE, 15);
    expect(printed.rows[2]?.costUsd).toBeCloseTo(POLISH, 15);
    const { costUsd, ...tokens } = printed.total;
    expect(tokens).toEqual({ runs: 3, steps: 4, inputTokens: 3900, outputTokens: 650, cacheReadTokens: 400, cacheWriteTokens: 0 });
    // The run priced its replayed answers as the models their entries name (CAS-14); the report prices them again, alike.
    expect(result.usage).toMatchObject({ inputTokens: 3900, outputTokens: 650, cacheReadTokens: 400, cacheWriteTokens: 0, steps: 4 });
    expect(costUsd).toBeCloseTo(result.usage.costUsd as number, 15);
    expect(costUsd).toBeCloseTo(PLANNER_STEP_0 + PLANNER_STEP_1 + OUTLINE + POLISH, 15);
  });

  it('prints the rows as a table indented by depth, replayed prices marked, with subtotals per parent and the total', async () => {
    const deeper = join(tempDir('report-'), 'deeper.jsonl');
    // The same trace with the planner itself delegated by a top run, so the planner gets a subtotal.
    const events = readTrace(trace);
    const top = { ts: events[0]?.ts, run: 'run_top', parent: null, depth: 0 };
    const lines = [
      { ...top, event: 'run.started', request: '/top.json', name: 'top', model: 'openai:gpt-4.1' },
      ...events.map((event) => ({ ...event, depth: (event.depth as number) + 1, parent: event.parent ?? 'run_top' })),
      { ...top, event: 'run.completed' },
    ];
    writeFileSync(deeper, lines.map((line) => JSON.stringify(line)).join('\n'));
    const { status, stdout, stderr } = await report([deeper]);
    expect([status, stderr]).toEqual([0, '']);
    const printed = stdout.split('\n');
    // The workers run in parallel, so either may have started first.
    printed.splice(3, 2, ...printed.slice(3, 5).sort((a, b) => a.localeCompare(b)));
    expect(printed).toEqual([
      'run                 model                tier      steps  input  output  cache read  cache write                cost',
      'top                 openai:gpt-4.1       balanced      0      0       0           0            0                  $0',
      '  planner           openai:gpt-4.1       balanced      2  2,700     350         400            0  $0.0084 (replayed)',
      '    worker          openai:gpt-4.1-nano  fast          1    500     200           0            0  $0.0001 (replayed)',
      '    worker          openai:gpt-4.1-nano  fast          1    700     100           0            0  $0.0001 (replayed)',
      '  planner subtotal  3 runs                             4  3,900     650         400            0  $0.0086 (replayed)',
      'total               4 runs                             4  3,900     650         400            0  $0.0086 (replayed)',
      '',
    ]);
  });

  it('groups by model, by tier and by parent, each with its own row shape', async () => {
    const byModel = await jsonReport([trace, '--by', 'model']);
    expect(byModel.rows.map(({ costUsd, ...rest }) => rest)).toEqual([
      { model: 'openai:gpt-4.1', runs: 1, steps: 2, inputTokens: 2700, outputTokens: 350, cacheReadTokens: 400, cacheWriteTokens: 0 },
      { model: 'openai:gpt-4.1-nano', runs: 2, steps: 2, inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0 },
    ]);
    expect(byModel.rows[1]?.costUsd).toBeCloseTo(OUTLINE + POLISH, 15);
    const byTier = await jsonReport([trace, '--by', 'tier']);
    expect(byTier.rows.map((row) => [row.tier, row.runs, row.steps, row.inputTokens])).toEqual([
      ['balanced', 1, 2, 2700],
      ['fast', 2, 2, 1200],
    ]);
    const byParent = await jsonReport([trace, '--by', 'parent']);
    expect(byParent.rows.map(({ costUsd, ...rest }) => rest)).toEqual([
      { parent: result.run, name: 'planner', depth: 0, runs: 3, steps: 4, inputTokens: 3900, outputTokens: 650, cacheReadTokens: 400, cacheWriteTokens: 0 },
    ]);
    // The total is the same whatever the grouping.
    expect(new Set([byModel, byTier, byParent].map((printed) => JSON.stringify(printed.total))).size).toBe(1);
    const text = await report([trace, '--by', 'tier']);
    expect(text.stdout.split('\n')[0]).toMatch(/^tier +runs +steps +input +output +cache read +cache write +cost$/);
    expect(text.stdout).toMatch(/\nfast +2 +2 +1,200 +300 +0 +0 +\$0\.0002 \(replayed\)\n/);
  });

  it('prices every answer again with the catalog in force: --models, else DELEGATE_MODELS; an unknown price is null, never 0', async () => {
    const repriced = await jsonReport([trace, '--models', 'cheaper.models.json']);
    expect(repriced.rows[0]?.costUsd).toBeCloseTo((1200 * 1 + 300 * 4 + 400 * 0.25 + 1500 * 1 + 50 * 4) / 1e6, 15);
    // cheaper.models.json removes gpt-4.1-nano: the catalog in force knows no price of it, the source's included (MODEL-9), so the workers' cost, and the total, are unknown.
    expect(repriced.rows.slice(1).map((row) => row.costUsd)).toEqual([null, null]);
    expect(repriced.total.costUsd).toBeNull();
    const fromEnvironment = await jsonReport([trace], { DELEGATE_MODELS: 'cheaper.models.json' });
    expect(fromEnvironment).toEqual(repriced);
    // The same trace with the workers on a model neither the source nor any models.json prices: their cost, and so the total, are unknown.
    const unpricedTrace = join(tempDir('report-'), 'unpriced.jsonl');
    writeFileSync(unpricedTrace, readFileSync(trace, 'utf8').replaceAll('openai:gpt-4.1-nano', 'openai:my-own-model'));
    const unpriced = await jsonReport([unpricedTrace]);
    expect(unpriced.rows.slice(1).map((row) => row.costUsd)).toEqual([null, null]);
    expect(unpriced.total.costUsd).toBeNull();
    const text = await report([unpricedTrace]);
    expect(text.stdout).toMatch(/\n {2}worker +openai:my-own-model +fast +1 +500 +200 +0 +0 +\$\? \(replayed\)\n/);
    expect(text.stderr).toContain('No price is known for model "openai:my-own-model"');
    const invalid = await report([trace, '--models', 'planner.cassette.json']);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain(`${join(fixtures, 'planner.cassette.json')}#/version`);
    const missing = await report([trace, '--models', 'no-such.models.json']);
    expect([missing.status, missing.stdout]).toEqual([2, '']);
    expect(missing.stderr).toContain(join(fixtures, 'no-such.models.json'));
  });

  it('reports a truncated trace: what it holds, and on stderr which runs never ended', async () => {
    const cut = join(tempDir('report-'), 'cut.jsonl');
    const lines = readFileSync(trace, 'utf8').trim().split('\n');
    // Up to the first worker's answer: the planner and both workers have started; only the first answered.
    const firstWorkerAnswer = lines.findIndex((line) => line.includes('"model.response"') && line.includes('"depth":1'));
    writeFileSync(cut, `${lines.slice(0, firstWorkerAnswer + 1).join('\n')}\n`);
    const printed = await report([cut, '--json']);
    expect(printed.status).toBe(0);
    const rows = (JSON.parse(printed.stdout) as JsonReport).rows;
    expect(rows.map((row) => [row.name, row.steps])).toEqual(
      rows.length === 3
        ? [
            ['planner', 1],
            ['worker', 1],
            ['worker', 0],
          ]
        : [
            ['planner', 1],
            ['worker', 1],
          ],
    );
    expect(printed.stderr).toMatch(
      new RegExp(`${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is truncated: \\d runs have no run\\.completed or run\\.failed \\(planner \\(run_`),
    );
    const text = await report([cut]);
    expect(text.stdout).toMatch(/\n… planner +openai:gpt-4\.1 +balanced +1 .* unfinished\n/);
  });

  it('marks failed runs with their code, taken from run.failed', async () => {
    const failed = join(tempDir('report-'), 'failed.jsonl');
    const events = readTrace(trace).map((event) =>
      event.event === 'run.completed' && event.depth === 1 ? { ...event, event: 'run.failed', code: 'max_tokens_exceeded', message: 'Cut.' } : event,
    );
    writeFileSync(failed, events.map((event) => JSON.stringify(event)).join('\n'));
    const text = await report([failed]);
    expect(text.status).toBe(0);
    expect(text.stdout.match(/^ {2}✗ worker .* max_tokens_exceeded$/gm)).toHaveLength(2);
    expect(text.stderr).toBe('');
  });

  it('refuses, with exit 2 and the file and line, a missing file, a line that is not JSON, and a line that is not a trace event', async () => {
    const folder = folderWith({});
    const missing = await report([join(folder, 'nope.jsonl')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`Cannot read the trace ${join(folder, 'nope.jsonl')}`);
    const first = readFileSync(trace, 'utf8').split('\n')[0];
    const cases: Array<[string, string]> = [
      [`${first}\n{"event": "model.response", "run"`, ':2:'],
      [`${first}\n\n{"note": "a cassette?"}`, ':3: this line is not a trace event: a trace event needs "event" to be a string, got nothing'],
      [`${first}\n[1, 2]`, ':2: this line is not a trace event: expected a trace event'],
      [
        `${first}\n${JSON.stringify({ event: 'model.response', run: 'r', parent: null, depth: 0, step: 0, model: 'm', usage: { inputTokens: -1, outputTokens: 0 }, costUsd: 0 })}`,
        ':2: this line is not a trace event: a model.response event needs "usage.inputTokens" to be a number of at least 0, got -1',
      ],
      [
        `${first}\n${JSON.stringify({ event: 'run.started', run: 'r', parent: null, depth: 'zero' })}`,
        ':2: this line is not a trace event: a trace event needs "depth"',
      ],
    ];
    for (const [text, expected] of cases) {
      const path = join(folder, 'bad.jsonl');
      writeFileSync(path, text);
      const outcome = await report([path, '--json']);
      expect(outcome.status).toBe(2);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr).toContain(`${path}${expected}`);
    }
  });

  it('reads a trace whose lines are longer than a read chunk, with CRLF line ends', async () => {
    const long = join(tempDir('report-'), 'long.jsonl');
    const events = readTrace(trace).map((event) => (event.event === 'run.started' && event.depth === 0 ? { ...event, note: 'x'.repeat(300_000) } : event));
    writeFileSync(long, events.map((event) => `${JSON.stringify(event)}\r\n`).join(''));
    expect(await jsonReport([long])).toEqual(await jsonReport([trace]));
  });

  it("stops when its signal is aborted: nothing on stdout, and 130 (the executable turns it into the signal's status, CLI-13)", async () => {
    const stdout = fakePipe();
    const stderr = fakePipe();
    const status = await reportMain([trace], { stdout, stderr, env: {}, cwd: fixtures, signal: AbortSignal.abort() });
    expect(status).toBe(130);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toBe('delegate-run report: cancelled before the report was printed.\n');
  });

  it('reads a trace 100 times the examples: a top run of 1,600 answers (maxSteps 1,600) and 1,000 delegated runs, every figure exact', async () => {
    const lines: string[] = [];
    const add = (event: Record<string, unknown>) => lines.push(JSON.stringify(event));
    const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 });
    add({ event: 'run.started', run: 'top', parent: null, depth: 0, request: 'top.json', name: 'top', model: 'openai:gpt-4.1' });
    for (let step = 0; step < 1_600; step++)
      add({ event: 'model.response', run: 'top', parent: null, depth: 0, step, model: 'openai:gpt-4.1', usage: usage(10, 1), costUsd: 0 });
    for (let index = 0; index < 1_000; index++) {
      const run = `worker-${index}`;
      add({ event: 'delegate.started', run: 'top', parent: null, depth: 0, child: run, name: 'worker', model: 'openai:gpt-4.1-nano', tier: 'fast' });
      add({ event: 'run.started', run, parent: 'top', depth: 1, request: 'anonymous:delegate', name: 'worker', model: 'openai:gpt-4.1-nano' });
      for (const step of [0, 1])
        add({ event: 'model.response', run, parent: 'top', depth: 1, step, model: 'openai:gpt-4.1-nano', usage: usage(100, 10), costUsd: 0 });
      add({ event: 'run.completed', run, parent: 'top', depth: 1 });
    }
    add({ event: 'run.completed', run: 'top', parent: null, depth: 0 });
    const big = join(tempDir('report-'), 'big.jsonl');
    writeFileSync(big, `${lines.join('\n')}\n`);

    const top = { steps: 1_600, inputTokens: 16_000, outputTokens: 1_600, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const workers = { steps: 2_000, inputTokens: 200_000, outputTokens: 20_000, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const topCost = (1_600 * (10 * 2 + 1 * 8)) / 1e6;
    const workersCost = (2_000 * (100 * 0.1 + 10 * 0.4)) / 1e6;
    const byRun = await jsonReport([big]);
    expect(byRun.rows).toHaveLength(1_001);
    expect(byRun.rows[0]).toMatchObject({ run: 'top', ...top });
    expect(byRun.total).toMatchObject({ runs: 1_001, steps: 3_600, inputTokens: 216_000, outputTokens: 21_600 });
    expect(byRun.total.costUsd).toBeCloseTo(topCost + workersCost, 9);
    const byModel = await jsonReport([big, '--by', 'model']);
    expect(byModel.rows.map(({ costUsd, ...row }) => row)).toEqual([
      { model: 'openai:gpt-4.1', runs: 1, ...top },
      { model: 'openai:gpt-4.1-nano', runs: 1_000, ...workers },
    ]);
    expect(byModel.rows.map((row) => row.costUsd)).toEqual([expect.closeTo(topCost, 9), expect.closeTo(workersCost, 9)]);
    const byTier = await jsonReport([big, '--by', 'tier']);
    expect(byTier.rows.map((row) => [row.tier, row.runs, row.steps])).toEqual([
      ['balanced', 1, 1_600],
      ['fast', 1_000, 2_000],
    ]);
  });

  it('reads an empty trace as no runs, and takes bad usage as bad usage', async () => {
    const empty = join(tempDir('report-'), 'empty.jsonl');
    writeFileSync(empty, '');
    expect(JSON.parse((await report([empty, '--json'])).stdout)).toEqual({
      rows: [],
      total: { runs: 0, steps: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    });
    for (const args of [[], [trace, trace], [trace, '--by', 'day']]) {
      const outcome = await report(args);
      expect(outcome.status).toBe(2);
      expect(outcome.stderr).toContain('Usage: delegate-run report <trace.jsonl>');
    }
    // An unknown option is one line naming the nearest one, without the usage (CLI-29).
    const mistyped = await report([trace, '--jsno']);
    expect(mistyped.status).toBe(2);
    expect(mistyped.stderr).toBe('delegate-run report: unknown option --jsno; did you mean --json?\n');
    expect((await report(['--help'])).stdout).toContain('--by run|model|tier|parent');
  });
});

describe('the end-of-run summary', () => {
  it("labels its runs with the tiers of the command's own catalog: DELEGATE_MODELS relative to the command's folder", async () => {
    const folder = folderWith({ 'tiers.json': { models: { 'openai:gpt-4.1': { tier: 'deep' } } } });
    const stderr = fakePipe();
    const status = await main([join(fixtures, 'planner.json')], { stdout: fakePipe(), stderr, env: { DELEGATE_MODELS: 'tiers.json' }, cwd: folder });
    expect(status, stderr.text()).toBe(0);
    expect(stderr.text()).toMatch(/^ {4}planner +openai:gpt-4\.1 +deep /m);
  });
});

describe('delegate-run report through the binary', () => {
  it('is the subcommand `report`; a request file named report still runs as ./report', async () => {
    const folder = tempDir('report-bin-');
    const traceCopy = join(folder, 'trace.jsonl');
    copyFileSync(trace, traceCopy);
    const printed = await runCli(['report', 'trace.jsonl', '--json'], { cwd: folder });
    expect(printed.code).toBe(0);
    expect((JSON.parse(printed.stdout) as JsonReport).total.inputTokens).toBe(3900);
    // A Request in a file named `report`, with its cassette beside it (CLI-3).
    writeFileSync(
      join(folder, 'report'),
      JSON.stringify({ meta: { name: 'reporter' }, context: [{ type: 'system', text: 'Say ok.' }], schema: { type: 'string' } }),
    );
    writeFileSync(join(folder, 'report.cassette.json'), JSON.stringify({ version: 1, entries: [{ solution: { calls: [], output: 'ok' } }] }));
    const ran = await runCli(['./report', '--json'], { cwd: folder });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, output: 'ok' });
    const bare = await runCli(['report'], { cwd: folder });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Expected a trace file (.jsonl) to report on.');
  });

  it('shows the same breakdown in the end-of-run summary, priced as the replayed models, and keeps --json and --quiet clean', async () => {
    const ownTrace = join(tempDir('report-'), 'trace.jsonl');
    const run = await runCli([join(fixtures, 'planner.json'), '--trace', ownTrace], { cwd: fixtures });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('done\n');
    const summary = run.stderr.slice(run.stderr.indexOf('✓ planner done'));
    expect(summary).toContain('  cost $0.0086 (replayed) · 3 runs · 4 steps · 2 tool calls\n  cost by run\n');
    // The workers run in parallel, so the rows' order is the one this run's trace holds.
    const printed = await report([ownTrace]);
    // The summary's table is the report's, indented under the summary.
    const table = printed.stdout
      .trim()
      .split('\n')
      .map((line) => `    ${line}`);
    expect(summary.trim().split('\n').slice(-table.length)).toEqual(table.map((line) => line.trimEnd()));
    const json = await runCli([join(fixtures, 'planner.json'), '--json'], { cwd: fixtures });
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, usage: { steps: 4, toolCalls: 2 } });
    const quiet = await runCli([join(fixtures, 'planner.json'), '--quiet'], { cwd: fixtures });
    expect(quiet.stderr).not.toContain('cost by run');
  });
});
