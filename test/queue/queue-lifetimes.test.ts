// Nothing the queue mode writes outlives its bound (QUEUE-25, QUEUE-26) and a wide run warns of no listener leak (QUEUE-10), on a real redis-server with delegate-worker processes.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { exited, folderWith, runCli, startCli, waitFor } from '../helpers/cli.js';
import { bossOf, bossRequest, fanOutFolder, jobCounts, taskRequest } from '../helpers/queue-fixture.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import { folderFlags } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable } from '../helpers/redis-server.js';

let queues = 0;
/** A queue of its own for each test. */
const freshQueue = () => `life${process.pid}-${++queues}`;

/** Every key of the queue `queue`, BullMQ's and the project's own, with its TTL in seconds (-1: none). */
async function keysOf(url: string, queue: string): Promise<Map<string, number>> {
  const redis = new Redis(url);
  try {
    const keys = [...(await redis.keys(`bull:${queue}:*`)), ...(await redis.keys(`delegate-run:${queue}:*`))];
    const found = new Map<string, number>();
    for (const key of keys) found.set(key, await redis.ttl(key));
    return found;
  } finally {
    redis.disconnect();
  }
}

/**
 * A folder whose boss delegates two tasks; each task's model calls `mark`, an Activity that notes
 * it started, waits `delayMs` unless its run is cancelled, then writes `marker`.
 */
function slowMarkerFolder(delayMs: number): string {
  const task = taskRequest({ mark: { description: 'Marks.', properties: {}, _activity: 'mark' } });
  const boss = bossRequest({ type: 'string' });
  const cassette = {
    version: 1,
    entries: [
      {
        match: { request: 'boss', step: 0 },
        solution: { calls: [0, 1].map((n) => ({ _tool: 'work', n })), output: null },
        usage: { inputTokens: 1, outputTokens: 1 },
      },
      { match: { request: 'boss', step: 1 }, repeat: true, solution: { calls: [], output: 'done' }, usage: { inputTokens: 1, outputTokens: 1 } },
      { match: { request: 'task', step: 0 }, repeat: true, solution: { calls: [{ _tool: 'mark' }], output: null }, usage: { inputTokens: 1, outputTokens: 1 } },
      { match: { request: 'task', step: 1 }, repeat: true, solution: { calls: [], output: 'marked' }, usage: { inputTokens: 1, outputTokens: 1 } },
    ],
  };
  const folder = folderWith({ 'boss.json': boss, 'task.json': task, 'boss.cassette.json': cassette }, 'delegate-lifetimes-');
  writeFileSync(
    join(folder, 'activities.mjs'),
    `import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
export default {
  async mark(call, tool, context, environment) {
    writeFileSync(${JSON.stringify(join(folder, 'started'))}, 'yes');
    await sleep(${delayMs}, undefined, { signal: environment.signal });
    writeFileSync(${JSON.stringify(join(folder, 'marker'))}, 'written');
    return 'marked';
  },
};
`,
  );
  return folder;
}

describe.skipIf(!redisAvailable)(
  redisAvailable ? 'what the queue mode leaves behind, on a real redis-server' : `queue lifetime tests, ${REDIS_SKIP_REASON}`,
  () => {
    const queues = useQueuePool();

    it("aborts the jobs of a caller SIGKILLed mid-run once its tree's heartbeat lapses: the Activity never writes its marker", async () => {
      const queue = freshQueue();
      const folder = slowMarkerFolder(8000);
      await queues.start(1, queue, [...folderFlags(folder), '--activities', join(folder, 'activities.mjs')]);
      const { child, done } = startCli([bossOf(folder), '--quiet', '--queue', queues.redis.url, '--queue-name', queue, '--queue-heartbeat', '1']);
      await waitFor(() => existsSync(join(folder, 'started')), 20_000);
      child.kill('SIGKILL');
      await exited(done, 'the SIGKILLed caller');
      const killedAt = Date.now();
      // Heartbeat (1 s) and one worker check (2 s): the jobs end well before the Activity's 8 s.
      const counts = async () => jobCounts(queues.redis.url, queue);
      let active = (await counts()).active;
      while (active > 0 && Date.now() - killedAt < 15_000) {
        await new Promise((wait) => setTimeout(wait, 200));
        active = (await counts()).active;
      }
      expect(active).toBe(0);
      // Past the moment the Activity would have written, had it run on.
      await new Promise((wait) => setTimeout(wait, Math.max(0, 9000 - (Date.now() - killedAt))));
      expect(existsSync(join(folder, 'marker'))).toBe(false);
    }, 40_000);

    it('leaves every key of the queue with a TTL after a run, and no job past --queue-keep', async () => {
      const queue = freshQueue();
      const folder = fanOutFolder(20);
      await queues.start(2, queue, [...folderFlags(folder), '--concurrency', '10']);
      const result = await runCli([bossOf(folder), '--json', '--quiet', '--queue', queues.redis.url, '--queue-name', queue, '--queue-keep', '2']);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).output).toEqual({ done: 20 });
      const after = await keysOf(queues.redis.url, queue);
      expect(after.size).toBeGreaterThan(0);
      expect([...after].filter(([, ttl]) => ttl === -1).map(([key]) => key)).toEqual([]);
      // The job hashes go once --queue-keep has passed, with no later traffic on the queue.
      const jobHash = new RegExp(`^bull:${queue}:run_[0-9a-f]{12}$`);
      const started = Date.now();
      let left = [...(await keysOf(queues.redis.url, queue)).keys()].filter((key) => jobHash.test(key));
      while (left.length > 0 && Date.now() - started < 10_000) {
        await new Promise((wait) => setTimeout(wait, 250));
        left = [...(await keysOf(queues.redis.url, queue)).keys()].filter((key) => jobHash.test(key));
      }
      expect(left).toEqual([]);
    }, 60_000);

    it('prints no MaxListenersExceededWarning for a 100-wide run', async () => {
      const queue = freshQueue();
      const folder = fanOutFolder(100);
      await queues.start(2, queue, [...folderFlags(folder), '--concurrency', '50']);
      const result = await runCli([bossOf(folder), '--json', '--quiet', '--queue', queues.redis.url, '--queue-name', queue]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).output).toEqual({ done: 100 });
      expect(result.stderr).not.toContain('MaxListenersExceededWarning');
    }, 60_000);
  },
);
