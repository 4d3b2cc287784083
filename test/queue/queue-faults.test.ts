// A 200-wide fan-out over three worker processes, and the faults: a parent cancelled mid-run, a worker SIGKILLed mid-job, Redis stopped mid-run, a job that never answers, a budget shared by all workers, approvals on a worker (QUEUE-6 to QUEUE-11).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, readTrace, runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { bossOf, fanOutFolder, jobCounts } from '../helpers/queue-fixture.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import { folderFlags, startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';

/** The command line of a queued boss run: `--json --quiet` on the queue `queue` of `url`, with `extra` flags. */
function queuedRun(folder: string, url: string, queue: string, ...extra: string[]): string[] {
  return [bossOf(folder), '--json', '--quiet', '--queue', url, '--queue-name', queue, ...extra];
}

/** True once the trace file holds an event named `name`. */
function traced(path: string, name: string): boolean {
  return existsSync(path) && readFileSync(path, 'utf8').includes(`"event":"${name}"`);
}

const usageOf = (stdout: string) => {
  const { ms: _ms, ...usage } = JSON.parse(stdout).usage;
  return usage;
};

let queues = 0;
/** A queue of its own for each test, so its workers take only its jobs. */
const freshQueue = () => `q${process.pid}-${++queues}`;

/**
 * A boss delegating two slow tasks on a redis-server of its own, with one worker: once the first job
 * is taken, `fault` is done to Redis; both delegations must fail with `worker_error` saying
 * `message`, and the parent, whose model sees the failed calls and answers, exits 0 within `withinMs`.
 */
async function delegationsOutlive(
  fault: (redis: TestRedis) => unknown,
  options: { flags?: string[]; message: string; withinMs: number },
): Promise<{ stderr: string; workers: string[] }> {
  const own = await startRedis();
  let started: WorkerProcess[] = [];
  try {
    const queue = freshQueue();
    const folder = fanOutFolder(2, { delayMs: 60_000 });
    started = await startWorkers(own.url, 1, ['--queue-name', queue, ...folderFlags(folder)]);
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli(queuedRun(folder, own.url, queue, ...(options.flags ?? []), '--trace', trace));
    await waitFor(() => traced(trace, 'queue.job'), 20_000);
    await fault(own);
    const result = await exited(done, 'the parent whose Redis failed', options.withinMs);
    const failed = readTrace(trace).filter((event) => event.event === 'delegate.failed');
    expect(failed).toHaveLength(2);
    for (const event of failed) {
      expect(event.code).toBe('worker_error');
      expect(String(event.message)).toContain(options.message);
    }
    expect(result.code).toBe(0);
    return { stderr: result.stderr, workers: started.map((worker) => worker.stderr()) };
  } finally {
    own.process.kill('SIGCONT');
    await stopWorkers(started);
    await own.stop();
  }
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'the queue under load and faults, on a real redis-server' : `queue fault tests, ${REDIS_SKIP_REASON}`, () => {
  const queues = useQueuePool();
  const pool = (count: number, queue: string, extra: string[] = []): Promise<WorkerProcess[]> => queues.start(count, queue, extra);

  it('fans 200 delegations out over 3 worker processes with the output and usage of the same run in process', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(200);
    const started = await pool(3, queue, ['--concurrency', '100', ...folderFlags(folder)]);
    const local = await runCli([bossOf(folder), '--json', '--quiet']);
    expect(local.code).toBe(0);
    const trace = join(tempDir(), 'trace.jsonl');
    const queued = await runCli(queuedRun(folder, queues.redis.url, queue, '--trace', trace));
    expect(queued.code).toBe(0);
    expect(JSON.parse(queued.stdout).output).toEqual({ done: 200 });
    expect(JSON.parse(queued.stdout).output).toEqual(JSON.parse(local.stdout).output);
    expect(usageOf(queued.stdout)).toEqual(usageOf(local.stdout));
    const events = readTrace(trace);
    const jobs = events.filter((event) => event.event === 'queue.job');
    expect(jobs).toHaveLength(200);
    // Every worker took some of them.
    for (const worker of started) expect(jobs.some((job) => String(job.worker).endsWith(`:${worker.child.pid}`))).toBe(true);
    expect(events.filter((event) => event.event === 'delegate.completed')).toHaveLength(200);
    expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ active: 0, waiting: 0, failed: 0 });
  }, 120_000);

  it('cancels the tree on SIGINT: the parent exits 130, no job is left active or waiting 2 s later', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(3, { delayMs: 60_000 });
    const [worker] = await pool(1, queue, folderFlags(folder));
    const trace = join(tempDir(), 'trace.jsonl');
    const { child, done } = startCli(queuedRun(folder, queues.redis.url, queue, '--trace', trace, '--max-concurrency', '2'));
    await waitFor(() => traced(trace, 'queue.job'), 20_000);
    child.kill('SIGINT');
    const result = await exited(done, 'the cancelled parent');
    expect(result.code).toBe(130);
    await new Promise((wait) => setTimeout(wait, 2000));
    expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ active: 0, waiting: 0 });
    // The worker ended the child itself (cancelled on the worker, QUEUE-7) and lives on.
    expect(worker?.child.exitCode).toBeNull();
    const failedChildren = readTrace(trace).filter((event) => event.event === 'run.failed' && event.depth === 1);
    expect(failedChildren.map((event) => event.code)).toContain('cancelled_by_user');
  }, 60_000);

  it('hands the job of a SIGKILLed worker to another: the parent completes, each attempt traced', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(1, { delayMs: 3000 });
    const [doomed] = await pool(1, queue, ['--lock-seconds', '1', ...folderFlags(folder)]);
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli(queuedRun(folder, queues.redis.url, queue, '--trace', trace));
    await waitFor(() => traced(trace, 'queue.job'), 20_000);
    doomed?.child.kill('SIGKILL');
    // The rescuer's own lock is long, so a loaded machine cannot make it miss a renewal and stall the job a second time.
    const [rescuer] = await pool(1, queue, ['--lock-seconds', '10', ...folderFlags(folder)]);
    if (!rescuer) throw new Error('no rescuer started');
    const result = await exited(done, 'the parent of a killed worker').catch(async () => done);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).output).toEqual({ done: 1 });
    const attempts = readTrace(trace).filter((event) => event.event === 'queue.job');
    expect(attempts.map((event) => event.attempt)).toEqual([1, 2]);
    expect(new Set(attempts.map((event) => event.run)).size).toBe(1);
    expect(attempts[1]?.worker).toBe(`${String(attempts[1]?.worker).split(':')[0]}:${rescuer.child.pid}`);
  }, 60_000);

  it('lets a worker given SIGTERM mid-job finish that job before it exits: the job is neither lost nor run twice (CLI-24)', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(1, { delayMs: 3000 });
    const [stopped] = await pool(1, queue, folderFlags(folder));
    if (!stopped) throw new Error('no worker started');
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli(queuedRun(folder, queues.redis.url, queue, '--trace', trace));
    await waitFor(() => traced(trace, 'queue.job'), 20_000);
    const workerExit = new Promise<number | null>((ended) => stopped.child.once('exit', (code) => ended(code)));
    stopped.child.kill('SIGTERM');
    // No other worker is there to take the job: the parent completes only if the stopping worker finishes it.
    const result = await exited(done, 'the parent of a stopped worker');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).output).toEqual({ done: 1 });
    expect(await workerExit).toBe(0);
    const events = readTrace(trace);
    expect(events.filter((event) => event.event === 'queue.job').map((event) => event.attempt)).toEqual([1]);
    expect(events.filter((event) => event.event === 'delegate.completed')).toHaveLength(1);
    expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ active: 0, waiting: 0, failed: 0 });
  }, 60_000);

  it('fails the waiting delegations with worker_error when Redis stops mid-run, instead of hanging', async () => {
    // Bounded by the connection giving up (about 4 s, QUEUE-9) plus the run's own end; the margin is for a loaded machine.
    await delegationsOutlive((redis) => redis.stop(), { message: 'Lost the connection to Redis', withinMs: 30_000 });
  }, 60_000);

  it('lets a worker given SIGTERM after Redis went away mid-job exit, with status 0, instead of waiting for Redis (CLI-24, QUEUE-9)', async () => {
    const own = await startRedis();
    let started: WorkerProcess[] = [];
    try {
      const queue = freshQueue();
      const folder = fanOutFolder(1, { delayMs: 2000 });
      started = await startWorkers(own.url, 1, ['--queue-name', queue, ...folderFlags(folder)]);
      const [worker] = started;
      if (!worker) throw new Error('no worker started');
      const trace = join(tempDir(), 'trace.jsonl');
      const { child } = startCli(queuedRun(folder, own.url, queue, '--trace', trace));
      await waitFor(() => traced(trace, 'queue.job'), 20_000);
      await own.stop();
      const exit = new Promise<number | null>((ended) => worker.child.once('exit', (code) => ended(code)));
      worker.child.kill('SIGTERM');
      // The job ends, its end cannot be written, and the worker's goodbyes to Redis give up; the margin is for a loaded machine.
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the worker had not exited 30 s after SIGTERM: ${worker.stderr()}`)), 30_000);
      });
      expect(await Promise.race([exit, stuck]).finally(() => clearTimeout(timer))).toBe(0);
      child.kill('SIGKILL');
    } finally {
      await stopWorkers(started);
      await own.stop();
    }
  }, 60_000);

  it('fails the waiting delegations with worker_error when Redis restarts empty within the reconnect window, and says the outage once, with no unhandled error stack (QUEUE-33, QUEUE-34)', async () => {
    let again: TestRedis | undefined;
    try {
      // Killed and started again on the same port at once: every connection comes back, to a Redis without the jobs.
      const { stderr, workers } = await delegationsOutlive(
        async (redis) => {
          await redis.stop();
          again = await startRedis(redis.port);
        },
        // Noticed when the connection is ready again, else within the 10 s check; the margin is for a loaded machine.
        { message: 'is gone from Redis', withinMs: 40_000 },
      );
      for (const text of [stderr, ...workers]) {
        expect(text).not.toContain('Unhandled error event');
        expect(text.split('\n').filter((line) => line.includes('is not answering')).length).toBeLessThanOrEqual(1);
      }
      expect(stderr).toContain('is not answering');
    } finally {
      await again?.stop();
    }
  }, 90_000);

  it('ends the run when Redis stays connected but stops answering: each wait ends by --queue-timeout, and nothing after it hangs (QUEUE-9, QUEUE-10)', async () => {
    // Stopped, not killed: every connection stays open and no command is answered, as behind a dead link.
    // 2 s of --queue-timeout, then each of the runner's own commands gives up after 5 s (QUEUE-9); the margin is for a loaded machine.
    await delegationsOutlive((redis) => void redis.process.kill('SIGSTOP'), {
      flags: ['--queue-timeout', '2'],
      message: 'gave no result within 2 s',
      withinMs: 45_000,
    });
  }, 90_000);

  it('bounds a job whose result never comes by --queue-timeout', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(1, { delayMs: 30_000 });
    await pool(1, queue, folderFlags(folder));
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(queuedRun(folder, queues.redis.url, queue, '--queue-timeout', '1', '--trace', trace));
    expect(result.code).toBe(0);
    const failed = readTrace(trace).find((event) => event.event === 'delegate.failed');
    expect(failed).toMatchObject({ code: 'worker_error', error: { timeoutMs: 1000 } });
    expect(String(failed?.message)).toContain('gave no result within 1 s');
  }, 60_000);

  it("stops the tree at the budget across workers: the parent's next model call sees what the workers spent", async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(4, { taskTokens: 1000 });
    await pool(2, queue, folderFlags(folder));
    const local = await runCli([bossOf(folder), '--json', '--quiet', '--budget-tokens', '2000']);
    const queued = await runCli(queuedRun(folder, queues.redis.url, queue, '--budget-tokens', '2000'));
    expect(JSON.parse(local.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded' } });
    expect(JSON.parse(queued.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded' } });
    expect(queued.code).toBe(local.code);
  }, 60_000);

  it('answers approvals on a worker by its --approve policy, strict by default', async () => {
    const queue = freshQueue();
    const folder = fanOutFolder(1, { approval: true });
    await pool(1, queue, folderFlags(folder));
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(queuedRun(folder, queues.redis.url, queue, '--approve', 'approve_all', '--trace', trace));
    expect(result.code).toBe(0);
    const decided = readTrace(trace).find((event) => event.event === 'approval.decided');
    expect(decided).toMatchObject({ decision: 'rejected', by: 'policy:strict', depth: 1 });
  }, 60_000);
});
