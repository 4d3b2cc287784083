// A cassette replayed across worker processes is consumed as in process, once per tree (CAS-2, CAS-11, CAS-16, QUEUE-17): on a real redis-server with two delegate-worker processes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace, runCli, tempDir } from '../helpers/cli.js';
import { fanOutFolder } from '../helpers/queue-fixture.js';
import { folderFlags, startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { RedisCassetteClaims } from '../../src/queue/redis-cassette-claims.js';

const QUEUE = 'cassette';

/** The fan-out boss delegating three tasks at once, its cassette replaced by `entries` after the boss's own two. */
function fanOutWith(taskEntries: unknown[], bossCalls = 3): string {
  const folder = fanOutFolder(bossCalls);
  const calls = Array.from({ length: bossCalls }, (_, n) => ({ _tool: 'work', n, _outputPath: `†state.r${n}` }));
  const cassette = {
    version: 1,
    entries: [{ match: { request: 'boss', step: 0 }, solution: { calls, output: null } }, ...taskEntries],
  };
  writeFileSync(join(folder, 'boss.cassette.json'), JSON.stringify(cassette));
  return folder;
}

/** Three entries that all match every task at step 0 and answer differently; slow enough that each worker (one job at a time) holds one task while the third waits. */
function threeAnswersFolder(): string {
  const answer = (output: string) => ({
    match: { request: 'task', step: 0 },
    delayMs: 400,
    solution: { calls: [], output },
    usage: { inputTokens: 10, outputTokens: 2 },
  });
  return fanOutWith([
    { match: { request: 'boss', step: 1 }, solution: { calls: [], output: { done: 3 } } },
    answer('first'),
    answer('second'),
    answer('third'),
  ]);
}

/** The outputs of the tree's children, as the trace holds them, sorted. */
function childOutputs(trace: string): unknown[] {
  return readTrace(trace)
    .filter((event) => event.event === 'run.completed' && event.depth === 1)
    .map((event) => event.output)
    .sort();
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'a cassette shared by the processes of a queued tree' : `queue cassette tests, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });

  /** Two workers, one job at a time each, for the tree in `folder`, on a queue of its own (QUEUE-23: a worker runs the cassette its command line names). */
  const workersFor = async (folder: string, queue: string) => {
    workers.push(...(await startWorkers(redis.url, 2, ['--queue-name', queue, '--concurrency', '1', ...folderFlags(folder)])));
  };

  afterAll(async () => {
    await stopWorkers(workers);
    await redis?.stop();
  });

  it('answers three children over two workers with the three entries, each once, as in process', async () => {
    const folder = threeAnswersFolder();
    await workersFor(folder, `${QUEUE}-three`);
    const localTrace = join(tempDir(), 'local.jsonl');
    const local = await runCli([join(folder, 'boss.json'), '--json', '--quiet', '--trace', localTrace]);
    expect(local.code, local.stderr).toBe(0);
    expect(childOutputs(localTrace)).toEqual(['first', 'second', 'third']);
    // Twice on the queue: a second tree has entries of its own, not those the first used up.
    for (const round of [1, 2]) {
      const trace = join(tempDir(), `queued-${round}.jsonl`);
      const queued = await runCli([join(folder, 'boss.json'), '--json', '--quiet', '--trace', trace, '--queue', redis.url, '--queue-name', `${QUEUE}-three`]);
      expect(queued.code, queued.stderr).toBe(0);
      expect(JSON.parse(queued.stdout).output).toEqual({ done: 3 });
      expect(childOutputs(trace)).toEqual(['first', 'second', 'third']);
      // Both workers ran some of them: each would have used the first entry had it consumed alone.
      const workersUsed = new Set(readTrace(trace).flatMap((event) => (event.event === 'queue.job' ? [event.worker] : [])));
      expect(workersUsed.size).toBe(2);
    }
  }, 120_000);

  it("shares the entries between the top run's process and the workers: an entry a child used is not the boss's next answer", async () => {
    // Entries without `match` answer any call: the child takes the first, so the boss's last answer is the second.
    const folder = fanOutWith([{ solution: { calls: [], output: { done: 1 } } }, { solution: { calls: [], output: { done: 2 } } }], 1);
    // The task answers with an object too, so that one entry fits both Requests.
    const task = JSON.parse(readFileSync(join(folder, 'task.json'), 'utf8'));
    writeFileSync(join(folder, 'task.json'), JSON.stringify({ ...task, schema: { type: 'object' } }));
    await workersFor(folder, `${QUEUE}-shared`);
    const local = await runCli([join(folder, 'boss.json'), '--json', '--quiet']);
    expect(JSON.parse(local.stdout).output).toEqual({ done: 2 });
    const trace = join(tempDir(), 'queued.jsonl');
    const queued = await runCli([join(folder, 'boss.json'), '--json', '--quiet', '--trace', trace, '--queue', redis.url, '--queue-name', `${QUEUE}-shared`]);
    expect(queued.code, queued.stderr).toBe(0);
    expect(childOutputs(trace)).toEqual([{ done: 1 }]);
    expect(JSON.parse(queued.stdout).output).toEqual({ done: 2 });
  }, 60_000);

  it('grants each entry to exactly one of several processes claiming at once, through SET NX', async () => {
    const clients = Array.from({ length: 4 }, () => new Redis(redis.port, '127.0.0.1'));
    try {
      const claimants = clients.map((client) => new RedisCassetteClaims(client, `delegate-run:${QUEUE}:cassette:run_race`));
      // Every claimant asks for every entry of five, all at once.
      const granted = await Promise.all(claimants.map((claims) => Promise.all([0, 1, 2, 3, 4].map((index) => claims.claim(index)))));
      for (const index of [0, 1, 2, 3, 4]) expect(granted.filter((answers) => answers[index]).length).toBe(1);
      // Another tree's claims are its own.
      expect(await new RedisCassetteClaims(clients[0] as Redis, `delegate-run:${QUEUE}:cassette:run_other`).claim(0)).toBe(true);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });

  it('fails the model call with model_error naming the entry when Redis cannot answer the claim', async () => {
    const gone = await startRedis();
    const client = new Redis(gone.port, '127.0.0.1', { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await gone.stop();
      await new Promise((wait) => setTimeout(wait, 100));
      const claims = new RedisCassetteClaims(client, `delegate-run:${QUEUE}:cassette:run_lost`);
      await expect(claims.claim(3)).rejects.toMatchObject({
        code: 'model_error',
        message: expect.stringContaining("Cannot claim the cassette's entry 3 through Redis"),
      });
    } finally {
      client.disconnect();
    }
  });
});
