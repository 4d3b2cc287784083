// What a queued delegation asks of Redis (QUEUE-5, QUEUE-26, QUEUE-35), on a real redis-server of its own with delegate-worker processes: the queue's keys refreshed at most every few seconds yet every key with a TTL, scripts run by their SHA, trace events sent without a transaction each, and a burst's jobs started as they are taken.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, runCli, startCli } from '../helpers/cli.js';
import { bossOf, fanOutFolder, jobCounts } from '../helpers/queue-fixture.js';
import { folderFlags, startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { QueueKeyLifetimes } from '../../src/queue/key-lifetimes.js';
import { KEPT_SECONDS, queueWideKeys } from '../../src/queue/queue-keys.js';

/** How many times Redis ran each command since its stats were last reset. */
async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await client.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match?.[1] && match[2]) calls.set(match[1], Number(match[2]));
  }
  return calls;
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'what a queued delegation asks of a real redis-server' : `queue traffic tests, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  let client: Redis;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    await stopWorkers(workers);
    client?.disconnect();
    await redis?.stop();
  });

  it("refreshes the queue's keys a few times for a 40-wide run, not twice per job, sends no script text per job, and leaves every key with a TTL (QUEUE-26)", async () => {
    const queue = 'traffic';
    const wide = 40;
    const folder = fanOutFolder(wide);
    workers.push(...(await startWorkers(redis.url, 1, ['--queue-name', queue, ...folderFlags(folder), '--concurrency', String(wide)])));
    await client.config('RESETSTAT');
    const result = await runCli([bossOf(folder), '--json', '--quiet', '--queue', redis.url, '--queue-name', queue]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).output).toEqual({ done: wide });
    const calls = await commandCalls(client);
    // One TTL per job is the look at its own hash (a waiting job's lifetime); the rest are the queue-wide keys' refreshes.
    const refreshes = ((calls.get('ttl') ?? 0) - wide) / queueWideKeys(queue).length;
    // Each job added and each job ended refreshed every queue-wide key: 80 refreshes. Now the caller and the worker
    // refresh at most once per 5 s besides the worker's check every 2 s and the caller's close: a few, however wide.
    expect(refreshes).toBeLessThan(12);
    // Scripts go by their SHA (EVALSHA): their text is sent once per script, not with each job (one admission, one lifetime each).
    expect(calls.get('eval') ?? 0).toBeLessThan(10);
    // A job's trace events go in one write with one expiry, not a MULTI ... EXEC of their own each.
    expect(calls.get('multi') ?? 0).toBeLessThan(wide);
    const keys = [...(await client.keys(`bull:${queue}:*`)), ...(await client.keys(`delegate-run:${queue}:*`))];
    expect(keys.length).toBeGreaterThan(0);
    const withoutTtl = [];
    for (const key of keys) if ((await client.ttl(key)) === -1) withoutTtl.push(key);
    expect(withoutTtl).toEqual([]);
  }, 60_000);

  it('gives a queue key written within the interval its lifetime when the interval ends, and at close (QUEUE-26)', async () => {
    const queue = 'throttled';
    const [wait, active] = queueWideKeys(queue).filter((key) => key.endsWith(':wait') || key.endsWith(':active'));
    if (!wait || !active) throw new Error('no wait or active key');
    const lifetimes = new QueueKeyLifetimes(client, queue, 2000);
    await client.rpush(wait, 'job');
    // The first touch refreshes at once.
    lifetimes.touched();
    await expect.poll(() => client.ttl(wait), { timeout: 10_000 }).toBeGreaterThan(KEPT_SECONDS);
    // A key BullMQ writes anew within the interval gets its lifetime when the interval ends, with no more traffic.
    await client.rpush(active, 'job');
    lifetimes.touched();
    lifetimes.touched();
    expect(await client.ttl(active)).toBe(-1);
    await expect.poll(() => client.ttl(active), { timeout: 10_000 }).toBeGreaterThan(KEPT_SECONDS);
    // And one written just before the process closes gets it at close.
    await client.del(active);
    await client.rpush(active, 'job');
    lifetimes.touched();
    await lifetimes.close();
    expect(await client.ttl(active)).toBeGreaterThan(KEPT_SECONDS);
  }, 20_000);

  it('starts the first job of a burst long before it has taken the last: the jobs are not all fetched first (QUEUE-35)', async () => {
    const queue = 'burst';
    const wide = 60;
    const folder = fanOutFolder(wide);
    // The jobs wait in Redis before any worker is there, as a burst a worker cannot take at once does.
    const { done } = startCli([bossOf(folder), '--json', '--quiet', '--queue', redis.url, '--queue-name', queue]);
    await expect.poll(async () => (await jobCounts(redis.url, queue)).waiting, { timeout: 20_000, interval: 200 }).toBe(wide);
    const monitor = await new Redis(redis.url).monitor();
    // In the order Redis ran them: each job taken (BullMQ's moveToActive, whose keys begin with the queue's wait and active lists), and each job's first look when it starts (QUEUE-7, QUEUE-22).
    const seen: ('taken' | 'started')[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      // By SHA, or whole the first time on a connection.
      if ((args[0] === 'evalsha' || args[0] === 'eval') && args[3] === `bull:${queue}:wait` && args[4] === `bull:${queue}:active`) seen.push('taken');
      if (args[0] === 'exists' && args[1]?.startsWith(`delegate-run:${queue}:cancelled:`)) seen.push('started');
    });
    try {
      workers.push(...(await startWorkers(redis.url, 1, ['--queue-name', queue, ...folderFlags(folder), '--concurrency', String(wide)])));
      const result = await exited(done, 'the burst', 40_000);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).output).toEqual({ done: wide });
    } finally {
      monitor.disconnect();
    }
    // BullMQ's own loop took all 60 before it started one; now a job starts as soon as it is taken, a few looks ahead.
    const takenBeforeFirstStart = seen.indexOf('started');
    expect(takenBeforeFirstStart).toBeGreaterThan(0);
    expect(takenBeforeFirstStart).toBeLessThan(wide / 2);
  }, 60_000);
});
