// A queue test suite's throwaway redis-server and the delegate-worker processes its tests start, all stopped after the suite.
import { afterAll, beforeAll } from 'vitest';
import { startWorkers, stopWorkers, type WorkerProcess } from './queue-workers.js';
import { startRedis, type TestRedis } from './redis-server.js';

/** The suite's Redis and workers. */
export interface QueuePool {
  /** The suite's redis-server (started before its first test). */
  readonly redis: TestRedis;
  /** Starts `count` workers on the queue `queue` with `extra` flags, offline but for `env`. */
  start(count: number, queue: string, extra?: string[], env?: Record<string, string>): Promise<WorkerProcess[]>;
}

/** Registers, in the calling suite, a redis-server started before its tests and stopped after them with every worker started. */
export function useQueuePool(): QueuePool {
  let redis: TestRedis | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await stopWorkers(workers);
    await redis?.stop();
  });
  return {
    get redis() {
      if (!redis) throw new Error('the queue pool is used before its suite started');
      return redis;
    },
    async start(count, queue, extra = [], env = {}) {
      const started = await startWorkers(this.redis.url, count, ['--queue-name', queue, ...extra], env);
      workers.push(...started);
      return started;
    },
  };
}
