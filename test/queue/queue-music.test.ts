// The music example through a BullMQ queue on a real redis-server with two delegate-worker processes: the same output, usage and trace as in process (QUEUE-1 to QUEUE-5).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace, runCli, tempDir } from '../helpers/cli.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';

const MUSIC = ['requests/music/producer.json', '--input', '{"brief":"a sad ballad","ambience":"rain on a window"}', '--json'];

describe.skipIf(!redisAvailable)(redisAvailable ? 'delegations as BullMQ jobs on a real redis-server' : `queue tests, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    // The music folder is the workers' root, and its cassette the model they are given (QUEUE-23).
    workers = await startWorkers(redis.url, 2, ['--root', 'requests/music', '--model', 'replay:requests/music/producer.cassette.json']);
  });

  afterAll(async () => {
    await stopWorkers(workers);
    await redis?.stop();
  });

  it('runs the music example on two workers with the same output and usage as in process', async () => {
    const local = await runCli(MUSIC);
    const trace = join(tempDir(), 'trace.jsonl');
    const queued = await runCli([...MUSIC, '--queue', redis.url, '--trace', trace]);
    expect(queued.code).toBe(0);
    const localResult = JSON.parse(local.stdout);
    const queuedResult = JSON.parse(queued.stdout);
    expect(queuedResult.output).toEqual(localResult.output);
    const { ms: _a, ...localUsage } = localResult.usage;
    const { ms: _b, ...queuedUsage } = queuedResult.usage;
    expect(queuedUsage).toEqual(localUsage);
    // The children ran on the workers, and their events came back into the parent's trace (QUEUE-5).
    const events = readTrace(trace);
    const jobs = events.filter((event) => event.event === 'queue.job');
    expect(jobs).toHaveLength(3);
    // Exactly the fields TRACE-22 names, besides the common ones (TRACE-1).
    for (const job of jobs) expect(Object.keys(job).sort()).toEqual(['attempt', 'depth', 'event', 'job', 'parent', 'queue', 'run', 'ts', 'worker']);
    expect(jobs.map((job) => job.attempt)).toEqual([1, 1, 1]);
    const pids = workers.map((worker) => `:${worker.child.pid}`);
    for (const job of jobs) expect(pids.some((pid) => String(job.worker).endsWith(pid))).toBe(true);
    const completedChildren = events.filter((event) => event.event === 'run.completed' && event.depth !== 0);
    expect(completedChildren).toHaveLength(3);
    // In order per run: each child's run.started before its run.completed, and its job before both.
    for (const job of jobs) {
      const own = events.filter((event) => event.run === job.run).map((event) => event.event);
      expect(own[0]).toBe('queue.job');
      expect(own[1]).toBe('run.started');
      expect(own.at(-1)).toBe('run.completed');
    }
    expect(events.filter((event) => event.event === 'delegate.completed')).toHaveLength(3);
  });

  it('refuses an unreachable Redis at start with a clear usage error', async () => {
    const result = await runCli([...MUSIC, '--queue', 'redis://127.0.0.1:1/0']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'usage_error', message: expect.stringContaining('cannot reach Redis') } });
  });

  it('refuses a --queue that is not a Redis URL, and --queue-name without --queue', async () => {
    const scheme = await runCli([...MUSIC, '--queue', 'http://127.0.0.1:6379']);
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain('expected a redis:// or rediss:// URL');
    const alone = await runCli([...MUSIC, '--queue-name', 'q']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--queue-name is only for --queue');
  });
});
