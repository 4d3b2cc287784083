// The queue benchmark (npm run bench:queue): the 1,000-wide fan-out of bench/fan-out/ in process and through BullMQ on a throwaway redis-server with 1, 2 and 4 delegate-worker processes; a reading, never a test.
// The model is the loopback model (loopback-model.js) in a process of its own, answering after --latency ms (200). Each figure is printed beside its target (docs/09-performance.md).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { criticalPathMs, startLoopback } from './fan-out.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000' },
    latency: { type: 'string', default: '200' },
    workers: { type: 'string', default: '1,2,4' },
    // Jobs each worker runs at once: enough for the whole fan-out, so the workers' slots are not what is measured.
    concurrency: { type: 'string', default: '1000' },
    // One-wide runs per configuration for the latency a delegation adds when nothing else is queued.
    alone: { type: 'string', default: '5' },
  },
});
const TASKS = Number(values.tasks);
const LATENCY = Number(values.latency);
const RUN = resolve('dist/cli/run.js');
const WORKER = resolve('dist/cli/worker.js');
const FOLDER = resolve('bench/fan-out');
const CRITICAL_MS = criticalPathMs(LATENCY);
/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
  process.stdout.write('bench:queue skipped: no redis-server on PATH (apt-get install redis-server).\n');
  process.exit(0);
}

/** CPU milliseconds (user + system) process `pid` has used so far, read from /proc; NaN once it is gone. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Samples the CPU of `pid` every 10 ms until stopped: `at(ms since epoch)` is its CPU then, read from the samples either side. */
function cpuSampler(pid) {
  const samples = [];
  const take = () => {
    const ms = cpuMsOf(pid);
    if (!Number.isNaN(ms)) samples.push([Date.now(), ms]);
  };
  take();
  const timer = setInterval(take, 10);
  return {
    stop() {
      clearInterval(timer);
    },
    at(time) {
      let value = samples[0]?.[1] ?? Number.NaN;
      for (const [when, ms] of samples) {
        if (when > time) break;
        value = ms;
      }
      return value;
    },
  };
}

/** True once something accepts connections on 127.0.0.1:`port`. */
function accepting(port) {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

const environment = { ...process.env, OPENAI_API_KEY: 'not-needed' };

function startWorker(url, queue, baseUrl) {
  return new Promise((ready, fail) => {
    // The fan-out's folder as its root, and the loopback model as its model: a worker runs no model or document a job brings (QUEUE-23).
    const flags = ['--root', FOLDER, '--model', 'openai:gpt-4.1-mini', '--base-url', baseUrl, '--concurrency', values.concurrency];
    const child = spawn(process.execPath, [WORKER, '--queue', url, '--queue-name', queue, ...flags], { stdio: ['ignore', 'ignore', 'pipe'], env: environment });
    let said = '';
    child.stderr.on('data', (chunk) => {
      said += chunk;
      if (said.includes('taking jobs')) ready(child);
    });
    child.on('exit', (code) => fail(new Error(`delegate-worker exited ${code}: ${said}`)));
  });
}

/** The delegations of a trace: for each, its span (delegate.started to delegate.completed) and its child run's span, with their times. */
function delegationsOf(tracePath) {
  const events = readFileSync(tracePath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const at = (event) => Date.parse(event.ts);
  const started = new Map();
  const runs = new Map();
  const delegations = [];
  const top = { from: 0, to: 0 };
  for (const event of events) {
    if (event.event === 'run.started' && event.depth === 0) top.from = at(event);
    if (event.event === 'run.completed' && event.depth === 0) top.to = at(event);
    if (event.event === 'delegate.started') started.set(event.child, at(event));
    if (event.event === 'run.started' && event.depth === 1) runs.set(event.run, at(event));
    if (event.event === 'run.completed' && event.depth === 1) runs.set(event.run, at(event) - runs.get(event.run));
    if (event.event === 'delegate.completed') {
      const from = started.get(event.child);
      delegations.push({ from, to: at(event), added: at(event) - from - (runs.get(event.child) ?? 0) });
    }
  }
  return { delegations, topMs: top.to - top.from };
}

function mean(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

let traces = 0;
const scratch = mkdtempSync(join(tmpdir(), 'delegate-bench-queue-'));

/** One run of the orchestrator with `tasks` delegations; `others` are the pids (workers, Redis) whose CPU during the fan-out is counted. */
async function runOnce(loopback, tasks, queueArgs, others) {
  await loopback.reset(tasks);
  const trace = join(scratch, `trace-${++traces}.jsonl`);
  const args = [join(FOLDER, 'orchestrator.json'), '--model', 'openai:gpt-4.1-mini', '--base-url', `${loopback.url}/v1`, '--json', '--quiet'];
  args.push('--max-concurrency', String(tasks + 10), '--max-runs', String(tasks + 10), '--trace', trace, ...queueArgs);
  const othersBefore = others.map(cpuMsOf);
  const started = performance.now();
  const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: environment });
  const caller = cpuSampler(child.pid);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((done) => child.on('close', done));
  caller.stop();
  const othersCpu = others.map((pid, index) => cpuMsOf(pid) - othersBefore[index]);
  if (code !== 0) throw new Error(`exit ${code}: ${output}`);
  const { delegations, topMs } = delegationsOf(trace);
  const first = Math.min(...delegations.map((delegation) => delegation.from));
  const last = Math.max(...delegations.map((delegation) => delegation.to));
  // The caller's CPU from the first delegation's start to the last one's end: enqueueing, relaying and taking results (or running them, in process).
  const callerCpu = caller.at(last) - caller.at(first);
  return {
    seconds: (performance.now() - started) / 1000,
    runMs: topMs,
    fanOutMs: last - first,
    callerCpu,
    othersCpu,
    added: delegations.map((delegation) => delegation.added),
  };
}

/** What Redis spent, by command, since its stats were last reset: the five costliest, and the slow log's length. */
async function redisStats(redis) {
  const info = await redis.info('commandstats');
  const commands = [];
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match) commands.push({ name: match[1], calls: Number(match[2]), usec: Number(match[3]) });
  }
  commands.sort((a, b) => b.usec - a.usec);
  const slow = await redis.slowlog('LEN');
  return { commands, slow };
}

const loopback = await startLoopback({ latencyMs: LATENCY, tasks: TASKS });
const rows = [];
const measure = async (label, queueArgs, workerPids, redisPid) => {
  const others = [...workerPids, ...(redisPid === undefined ? [] : [redisPid])];
  // Warmed up first, as long-lived workers are: each process's first job pays for loading the SDK, compiling, and its connections.
  await runOnce(loopback, TASKS, queueArgs, others);
  // The latency a delegation adds when it is the only one: one-wide runs, the delegate's span less its child run's.
  const alone = [];
  for (let n = 0; n < Number(values.alone); n++) alone.push(...(await runOnce(loopback, 1, queueArgs, others)).added);
  const wide = await runOnce(loopback, TASKS, queueArgs, others);
  rows.push({ label, wide, alone: median(alone), workers: workerPids.length, redis: redisPid !== undefined });
  return wide;
};

process.stdout.write(`${TASKS} delegations at once, ${LATENCY} ms loopback model latency (its own process); critical path ${CRITICAL_MS} ms\n`);
await measure('in process', [], []);
const port = await freePort();
const redisServer = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const url = `redis://127.0.0.1:${port}/0`;
// The server takes a moment to listen: its port is tried until it accepts.
for (let tries = 0; !(await accepting(port)); tries++) {
  if (tries > 50) throw new Error(`redis-server did not listen on ${port}`);
  await new Promise((wait) => setTimeout(wait, 100));
}
const redis = new Redis(url);
const redisReports = [];
try {
  for (const count of values.workers.split(',').map(Number)) {
    const queue = `bench-${count}`;
    const workers = await Promise.all(Array.from({ length: count }, () => startWorker(url, queue, `${loopback.url}/v1`)));
    await redis.config('RESETSTAT');
    await redis.slowlog('RESET');
    try {
      await measure(
        `queue, ${count} worker${count === 1 ? '' : 's'}`,
        ['--queue', url, '--queue-name', queue],
        workers.map((worker) => worker.pid),
        redisServer.pid,
      );
      redisReports.push({ count, ...(await redisStats(redis)) });
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  }
} finally {
  redis.disconnect();
  redisServer.kill('SIGKILL');
  await loopback.close();
}

const inProcess = rows[0];
const verdict = (ok) => (ok ? 'meets' : 'MISSES');
for (const row of rows) {
  const { wide } = row;
  const ratio = wide.runMs / CRITICAL_MS;
  const lines = [`${row.label}:`];
  const ratioTarget = row.workers === 2 ? `target ≤ 1.25× and below in process (${(inProcess.wide.runMs / CRITICAL_MS).toFixed(2)}×)` : 'a reading';
  const ratioOk = ratio <= 1.25 && wide.runMs < inProcess.wide.runMs;
  lines.push(
    `  time / critical path   ${ratio.toFixed(2)}× (${Math.round(wide.runMs)} ms run, ${wide.seconds.toFixed(2)} s with the process)  ${ratioTarget}${row.workers === 2 ? `: ${verdict(ratioOk)}` : ''}`,
  );
  lines.push(
    `  throughput             ${Math.round((TASKS * 1000) / wide.fanOutMs)} delegations/s over the fan-out (${Math.round(wide.fanOutMs)} ms from first start to last end)`,
  );
  lines.push(
    `  CPU per delegate       caller ${(wide.callerCpu / TASKS).toFixed(2)} ms${row.workers > 0 ? `  workers ${(wide.othersCpu.slice(0, row.workers).reduce((a, b) => a + b, 0) / TASKS).toFixed(2)} ms  Redis ${(wide.othersCpu[row.workers] / TASKS).toFixed(3)} ms` : ''}`,
  );
  if (row.workers > 0) {
    lines.push(`  caller CPU per job     ${(wide.callerCpu / TASKS).toFixed(2)} ms  target ≤ 0.5 ms: ${verdict(wide.callerCpu / TASKS <= 0.5)}`);
    const added = row.alone - inProcess.alone;
    lines.push(
      `  latency a job adds     ${added.toFixed(1)} ms alone (delegate span less run span, median of ${values.alone}: ${row.alone.toFixed(1)} ms against ${inProcess.alone.toFixed(1)} ms in process)  target ≤ 20 ms: ${verdict(added <= 20)}`,
    );
  }
  lines.push(`  at ${TASKS} wide, a delegation's span less its run's: mean ${mean(wide.added).toFixed(1)} ms, median ${median(wide.added).toFixed(1)} ms`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
const queued = rows.filter((row) => row.workers > 0);
if (queued.length > 1) {
  const rates = queued.map((row) => `${row.workers}: ${Math.round((TASKS * 1000) / row.wide.fanOutMs)}/s`).join(', ');
  process.stdout.write(
    `throughput by workers   ${rates}  target: grows with workers until Redis or the caller's CPU is the limit (CPU per delegate above says which)\n`,
  );
}
for (const report of redisReports) {
  const total = report.commands.reduce((sum, command) => sum + command.usec, 0);
  const top = report.commands
    .slice(0, 6)
    .map((command) => `${command.name} ${command.calls}× ${(command.usec / 1000).toFixed(0)} ms`)
    .join(', ');
  process.stdout.write(
    `Redis, ${report.count} worker${report.count === 1 ? '' : 's'}: ${(total / 1000).toFixed(0)} ms in commands (${(total / 1000 / TASKS).toFixed(3)} ms per job), ${report.commands.reduce((sum, command) => sum + command.calls, 0)} calls; ${top}; slow log ${report.slow}\n`,
  );
}
