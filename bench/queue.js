// The queue benchmark (npm run bench:queue): 1,000 short delegations through BullMQ on a throwaway redis-server with 1, 2 and 4 delegate-worker processes, against the same run in process; a reading, never a test.
// Each delegate answers from a replay cassette after a latency (--latency, default 20 ms): a loopback model. Prints delegations per second and the latency a queued delegation adds (its delegate span minus its child run's span, mean).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { tasks: { type: 'string', default: '1000' }, latency: { type: 'string', default: '20' }, workers: { type: 'string', default: '1,2,4' } },
});
const TASKS = Number(values.tasks);
const LATENCY = Number(values.latency);
const RUN = resolve('dist/cli/run.js');
const WORKER = resolve('dist/cli/worker.js');

if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
  process.stdout.write('bench:queue skipped: no redis-server on PATH (apt-get install redis-server).\n');
  process.exit(0);
}

function folder() {
  const root = mkdtempSync(join(tmpdir(), 'delegate-bench-queue-'));
  const write = (name, value) => {
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, name), JSON.stringify(value));
  };
  write('task.json', {
    meta: { name: 'task' },
    context: [
      { type: 'system', text: 'Do it.' },
      { type: 'input', schema: { type: 'object', properties: { n: { type: 'number' } } } },
    ],
    schema: { type: 'string' },
  });
  write('boss.json', {
    meta: { name: 'boss' },
    context: [
      { type: 'system', text: 'Fan out.' },
      { type: 'tool', tool: { work: { properties: { n: { type: 'number' } }, _delegate: './task.json' } } },
    ],
    schema: { type: 'string' },
  });
  write('boss.cassette.json', {
    version: 1,
    entries: [
      {
        match: { request: 'boss', step: 0 },
        solution: { calls: Array.from({ length: TASKS }, (_, n) => ({ _tool: 'work', n, _outputPath: `†state.r${n}` })), output: null },
      },
      { match: { request: 'boss', step: 1 }, solution: { calls: [], output: 'done' } },
      { match: { request: 'task', step: 0 }, repeat: true, delayMs: LATENCY, solution: { calls: [], output: 'ok' } },
    ],
  });
  return root;
}

function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

function run(args) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('close', (code) => done({ code, stdout }));
  });
}

function startWorker(url, queue) {
  return new Promise((ready) => {
    // The tree's folder as its root, and the tree's cassette as its model: a worker runs no model or document a job brings (QUEUE-23).
    const flags = ['--root', root, '--model', `replay:${join(root, 'boss.cassette.json')}`];
    const child = spawn(process.execPath, [WORKER, '--queue', url, '--queue-name', queue, '--concurrency', '256', ...flags], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (chunk) => String(chunk).includes('taking jobs') && ready(child));
  });
}

/** Mean of (delegate span − child run span) over the trace's delegations, in ms. */
function addedLatency(tracePath) {
  const events = readFileSync(tracePath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const at = (event) => Date.parse(event.ts);
  const started = new Map();
  const runs = new Map();
  let total = 0;
  let count = 0;
  for (const event of events) {
    if (event.event === 'delegate.started') started.set(event.child, at(event));
    if (event.event === 'run.started' && event.depth === 1) runs.set(event.run, at(event));
    if (event.event === 'run.completed' && event.depth === 1) runs.set(event.run, at(event) - runs.get(event.run));
    if (event.event === 'delegate.completed') {
      total += at(event) - started.get(event.child) - (runs.get(event.child) ?? 0);
      count++;
    }
  }
  return count === 0 ? Number.NaN : total / count;
}

const root = folder();
const boss = join(root, 'boss.json');
const base = [boss, '--json', '--quiet', '--max-concurrency', '1000', '--max-runs', String(TASKS + 10)];
const rows = [];
const timed = async (label, args, trace) => {
  const started = performance.now();
  const result = await run([...args, '--trace', trace]);
  const seconds = (performance.now() - started) / 1000;
  if (result.code !== 0) throw new Error(`${label}: exit ${result.code} ${result.stdout}`);
  rows.push({ label, seconds, perSecond: TASKS / seconds, addedMs: addedLatency(trace) });
};
await timed('in process', base, join(root, 'local.jsonl'));
const port = await freePort();
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((wait) => setTimeout(wait, 300));
const url = `redis://127.0.0.1:${port}/0`;
try {
  for (const count of values.workers.split(',').map(Number)) {
    const queue = `bench-${count}`;
    const workers = await Promise.all(Array.from({ length: count }, () => startWorker(url, queue)));
    await timed(`queue, ${count} worker${count === 1 ? '' : 's'}`, [...base, '--queue', url, '--queue-name', queue], join(root, `queue-${count}.jsonl`));
    for (const worker of workers) worker.kill('SIGKILL');
  }
} finally {
  redis.kill('SIGKILL');
}
process.stdout.write(`${TASKS} delegations, ${LATENCY} ms model latency each\n`);
for (const row of rows) {
  process.stdout.write(
    `${row.label.padEnd(20)} ${row.seconds.toFixed(2).padStart(7)} s  ${row.perSecond.toFixed(0).padStart(6)} delegations/s  added latency per delegation ${row.addedMs.toFixed(1)} ms\n`,
  );
}
