/** Property tests of the run bound counted in Redis (QUEUE-20): however many processes admit at once, a tree starts at most maxRuns runs, and each refusal is the in-process one. */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/errors.js';
import { QueueChildRunner } from '../../src/queue/queue-child-runner.js';
import { RedisTreeBounds } from '../../src/queue/redis-tree-bounds.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(30);

/** Settles every admission, as the refused error or null when admitted. */
async function admissions(admits: Promise<void>[]): Promise<(ProtocolError | null)[]> {
  return Promise.all(
    admits.map((admit) =>
      admit.then(
        () => null,
        (error: unknown) => error as ProtocolError,
      ),
    ),
  );
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'the run bound counted in Redis (properties)' : `redis tree bounds, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  /** One connection per process of the tree: each admits on its own. */
  const clients: Redis[] = [];
  let trees = 0;

  beforeAll(async () => {
    redis = await startRedis();
    for (let index = 0; index < 4; index++) clients.push(new Redis(redis.port, '127.0.0.1'));
  });

  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis?.stop();
  });

  it('admits exactly min(asked, maxRuns - 1) children over up to 4 processes, and refuses the rest with budget_exceeded', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.array(fc.nat({ max: 3 }), { minLength: 0, maxLength: 30 }), async (maxRuns, askers) => {
        const key = `delegate-run:test:runs:tree${++trees}`;
        const top = new RedisTreeBounds({ maxRuns, maxConcurrency: 1 }, clients[0] as Redis, key, redis.url);
        top.start();
        const processes = clients.map((client) => new RedisTreeBounds({ maxRuns, maxConcurrency: 1 }, client, key, redis.url));
        const outcomes = await admissions(askers.map((asker, n) => (processes[asker] as RedisTreeBounds).admit(`child ${n}`)));
        const admitted = outcomes.filter((outcome) => outcome === null).length;
        expect(admitted).toBe(Math.min(askers.length, maxRuns - 1));
        for (const refusal of outcomes.filter((outcome) => outcome !== null)) {
          expect(refusal).toBeInstanceOf(ProtocolError);
          expect(refusal?.code).toBe('budget_exceeded');
          expect(refusal?.data).toEqual({ maxRuns, runs: maxRuns });
          expect(refusal?.message).toMatch(new RegExp(`would start run ${maxRuns + 1} of the run tree`));
        }
        // Every process learns of a refusal by syncing, and then stops its runs at their next model call.
        await Promise.all(processes.map((bounds) => bounds.sync()));
        for (const bounds of processes) {
          if (askers.length >= maxRuns) expect(() => bounds.check()).toThrow('reached its limit');
          else expect(() => bounds.check()).not.toThrow();
        }
      }),
      settings,
    );
  });

  it('starts the count afresh when a top run starts again under the same root (a resumed tree counts as in process)', async () => {
    const runner = await QueueChildRunner.connect({ url: redis.url, queueName: 'restart', relay: false });
    try {
      const first = runner.bounds('tree', { maxRuns: 2, maxConcurrency: 1 });
      await first.admit('a');
      await expect(first.admit('b')).rejects.toMatchObject({ code: 'budget_exceeded' });
      const again = runner.bounds('tree', { maxRuns: 2, maxConcurrency: 1 });
      await again.admit('a');
      expect(again.runs).toBe(2);
    } finally {
      await runner.close();
    }
  });

  it('fails an admission Redis cannot answer with worker_error naming the URL, instead of admitting blindly', async () => {
    const own = await startRedis();
    const client = new Redis(own.port, '127.0.0.1', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const bounds = new RedisTreeBounds({ maxRuns: 5, maxConcurrency: 1 }, client, 'delegate-run:test:runs:lost', own.url);
      await own.stop();
      await expect(bounds.admit('Delegating "x"')).rejects.toMatchObject({ code: 'worker_error', message: expect.stringContaining(own.url) });
      expect(bounds.runs).toBe(1);
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});
