// Benchmarks (npm run bench): medians and ratios, never pass/fail limits; `--json` prints the figures with targets as one JSON object. Runs against the build in dist/.
import { performance } from 'node:perf_hooks';
import { formatFigures, targetFigures } from './targets.js';
import { Runtime, ReplayModel, createRuntime, defaultHandlers } from '../dist/index.js';
import { recordOf } from '../dist/protocol/messages/data-messages.js';
import { foldRecords, readPath, makeWrite } from '../dist/protocol/variables/data-records.js';
import { parseReference } from '../dist/protocol/variables/references.js';
import { StreamedCalls } from '../dist/models/stream-calls.js';
import { CostTree } from '../dist/cli/report/cost-tree.js';
import { costReport } from '../dist/cli/report/cost-report.js';
import { startupFigures } from './startup.js';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(label, repeat, body) {
  for (let i = 0; i < Math.min(5, repeat); i++) await body(); // warm-up
  const samples = [];
  for (let i = 0; i < repeat; i++) {
    const started = performance.now();
    await body();
    samples.push(performance.now() - started);
  }
  const value = median(samples);
  process.stdout.write(`${label.padEnd(58)} median ${value.toFixed(3)} ms\n`);
  return value;
}

// 1. Loop overhead: one step with N parallel Activity calls, then the answer.
async function loopOverhead(calls) {
  const runtime = new Runtime({ activities: { echo: (call) => call.text } });
  const document = runtime.validate({
    meta: { name: 'bench' },
    context: [{ type: 'tool', tool: { echo: { properties: { text: { type: 'string' } } } } }],
    schema: { type: 'string' },
  });
  const entries = [
    {
      match: { step: 0 },
      solution: { calls: Array.from({ length: calls }, (_, i) => ({ _tool: 'echo', text: `t${i}`, _outputPath: `†state.r${i}` })), output: null },
      repeat: true,
    },
    { match: { step: 1 }, solution: { calls: [], output: 'ok' }, repeat: true },
  ];
  const model = new ReplayModel(entries);
  return measure(`loop: one step with ${calls} parallel calls`, 30, async () => {
    const result = await runtime.run(document, { model });
    if (!result.ok) throw result.error;
  });
}

// 2. Variable resolution: the newest-first walk against a full fold, over a long history.
async function resolution(size) {
  const messages = [];
  for (let i = 0; i < size; i++) {
    const target = parseReference(i % 3 === 0 ? '†state.items' : `†state.k${i % 50}`);
    messages.push(makeWrite(target, i % 3 === 0 ? { n: i } : i, { method: i % 3 === 0 ? 'push' : 'set', call: `c${i}` }));
  }
  const handlers = defaultHandlers();
  const records = messages.map((message) => recordOf(message, handlers));
  const path = ['k7'];
  const walk = await measure(`variables: readPath over ${size} writes`, 200, () => readPath(records, 'state', undefined, path));
  const fold = await measure(`variables: full fold over ${size} writes`, 200, () => foldRecords(records));
  process.stdout.write(`${'variables: fold / walk'.padEnd(58)} ratio ${(fold / walk).toFixed(1)}×\n`);
}

// 3. Delegation overhead: a parent delegating to an anonymous child, per run.
// 4. Streamed answers: every call of an answer of N calls judged as it arrives (LOOP-11); linear in N.
async function streamedAnswer(calls) {
  const schema = {
    type: 'object',
    required: ['calls', 'output'],
    properties: {
      calls: { type: 'array', items: { type: 'object', required: ['_tool'], properties: { _tool: { const: 'echo' }, text: { type: 'string' } } } },
      output: {},
    },
  };
  const text = JSON.stringify({ calls: Array.from({ length: calls }, (_, i) => ({ _tool: 'echo', text: `t${i}` })), output: null });
  return measure(`streaming: an answer of ${calls} calls, in 64-character chunks`, 5, () => {
    let delivered = 0;
    const streamed = new StreamedCalls({ requestName: 'b', step: 0, messages: [], schema, config: {}, onCall: () => delivered++ });
    for (let at = 0; at < text.length; at += 64) streamed.push(text.slice(at, at + 64));
    if (delivered !== calls) throw new Error(`delivered ${delivered} of ${calls}`);
  });
}

async function delegation() {
  const runtime = createRuntime({ root: process.cwd() });
  const document = runtime.validate({
    meta: { name: 'parent' },
    context: [
      {
        type: 'tool',
        tool: { child: { description: 'A child.', properties: { q: { type: 'string' } }, _delegate: 'anonymous', _output: { type: 'string' } } },
      },
    ],
    schema: { type: 'string' },
  });
  const model = new ReplayModel([
    { match: { request: 'parent', step: 0 }, solution: { calls: [{ _tool: 'child', q: 'x', _outputPath: '†output' }], output: null }, repeat: true },
    { match: { request: 'anonymous:child' }, solution: { calls: [], output: 'done' }, repeat: true },
  ]);
  return measure('delegation: parent + one anonymous child run', 30, async () => {
    const result = await runtime.run(document, { model });
    if (!result.ok) throw result.error;
  });
}

// 5. The cost report (CLI-17) of a run with N answers: priced and grouped by model in time linear in N.
async function costReportOf(answers) {
  const tree = new CostTree();
  tree.apply({ event: 'run.started', run: 'top', parent: null, depth: 0, request: 'top.json', model: 'openai:gpt-4.1' });
  for (let step = 0; step < answers; step++) {
    const usage = { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    tree.apply({ event: 'model.response', run: 'top', parent: null, depth: 0, step, model: 'openai:gpt-4.1', usage, costUsd: 0 });
  }
  return measure(`report: one run of ${answers} answers, priced and grouped`, 5, () => {
    const report = costReport(tree, { price: () => 0 });
    if (report.models[0].tally.steps !== answers) throw new Error('wrong report');
  });
}

// 4. Plan scheduling (PLAN-9): load (parse and validate) and run a plan of N latent calls, either
// independent or a chain where each call reads what the one before wrote. Time should grow
// linearly with N; a model step renders the independent results once.
function planText(shape, size) {
  const calls = Array.from({ length: size }, (_, i) =>
    shape === 'chain'
      ? { _tool: 'step', ...(i > 0 ? { x: `†state.v${i - 1}` } : {}), _output: i, _outputPath: i === size - 1 ? '†output' : `†state.v${i}` }
      : { _tool: 'step', x: i, _output: i, _outputPath: `†state.v${i}` },
  );
  const tool = { type: 'tool', tool: { step: { properties: { x: {} }, _output: {} } } };
  return JSON.stringify({ meta: { name: 'plan' }, context: [tool, { type: 'plan', calls }], schema: {} });
}

async function planScheduling(shape, size) {
  const runtime = new Runtime();
  const model = new ReplayModel([{ solution: { calls: [], output: 'done' }, repeat: true }]);
  const text = planText(shape, size);
  const repeat = size <= 1000 ? 5 : 1;
  const loads = [];
  const runs = [];
  for (let i = 0; i < repeat; i++) {
    let started = performance.now();
    const loaded = runtime.parse(text, 'plan.json');
    loads.push(performance.now() - started);
    started = performance.now();
    const result = await runtime.run(loaded, { model });
    runs.push(performance.now() - started);
    if (!result.ok) throw result.error;
  }
  const load = median(loads);
  const run = median(runs);
  const label = `plans: ${shape === 'chain' ? 'chain of' : 'independent,'} ${size.toLocaleString('en')} calls`;
  process.stdout.write(`${label.padEnd(58)} load ${load.toFixed(0).padStart(6)} ms · run ${run.toFixed(0).padStart(6)} ms\n`);
  return load + run;
}

const json = process.argv.includes('--json');
// With --json, stdout carries the one JSON object only: the other readings go to stderr.
const print = process.stdout.write.bind(process.stdout);
if (json) process.stdout.write = process.stderr.write.bind(process.stderr);
// Start-up first: each command is a process of its own, measured side by side with `node -e 0`.
const startup = startupFigures();
process.stdout.write(`start-up figures (value · target · ratio to target; at most 1 meets it):\n${formatFigures(startup).join('\n')}\n\n`);
const issueFigures = await targetFigures();
process.stdout.write(`issue 14 figures (value · target · ratio to target; at most 1 meets it):\n${formatFigures(issueFigures).join('\n')}\n\n`);
const figures = [...startup, ...issueFigures];
const one = await loopOverhead(1);
const fifty = await loopOverhead(50);
process.stdout.write(`${'loop: 50 calls / 1 call'.padEnd(58)} ratio ${(fifty / one).toFixed(1)}×\n`);
await resolution(2000);
await delegation();
const streamedSmall = await streamedAnswer(1000);
const streamedLarge = await streamedAnswer(10000);
process.stdout.write(`${'streaming: 10,000 / 1,000 calls'.padEnd(58)} ratio ${(streamedLarge / streamedSmall).toFixed(1)}× (linear: 10×)\n`);
const reportSmall = await costReportOf(1000);
const reportLarge = await costReportOf(50000);
process.stdout.write(`${'report: 50,000 / 1,000 answers'.padEnd(58)} ratio ${(reportLarge / reportSmall).toFixed(1)}× (linear: 50×)\n`);
for (const shape of ['independent', 'chain']) {
  const totals = [];
  for (const size of [1000, 10000, 50000]) totals.push(await planScheduling(shape, size));
  process.stdout.write(`${`plans: ${shape} 50,000 / 1,000 calls`.padEnd(58)} ratio ${(totals[2] / totals[0]).toFixed(1)}× (linear: 50×)\n`);
}
await (await import('./run-tree.js')).fanOutAtDefaults();
await (await import('./tier-delegation.js')).tierDelegation();
await (await import('./viewer.js')).viewerOpening();
const memory = process.memoryUsage();
process.stdout.write(`${'memory: heap used after benchmarks'.padEnd(58)} ${(memory.heapUsed / 1048576).toFixed(1)} MiB\n`);
if (json) print(`${JSON.stringify({ date: new Date().toISOString(), cores: (await import('node:os')).cpus().length, figures })}\n`);
