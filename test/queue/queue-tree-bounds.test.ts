// A tree's bounds across worker processes on a real redis-server: maxRuns counted once for the whole tree (QUEUE-20), model calls in flight bounded per worker (QUEUE-21), a timed-out job ended on its worker (QUEUE-22).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrace, runCli, tempDir } from '../helpers/cli.js';
import { bossOf, fanOutFolder, jobCounts } from '../helpers/queue-fixture.js';
import { jobsOf, nestedTreeFolder } from '../helpers/queue-tree-fixture.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import { folderFlags } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable } from '../helpers/redis-server.js';

let queues = 0;
/** A queue of its own for each test, so its workers take only its jobs. */
const freshQueue = () => `b${process.pid}-${++queues}`;

describe.skipIf(!redisAvailable)(
  redisAvailable ? "a tree's bounds across worker processes, on a real redis-server" : `queue bound tests, ${REDIS_SKIP_REASON}`,
  () => {
    const queues = useQueuePool();

    /** `count` workers on `queue` whose resolvers are confined to `folder`, where the tree's documents are, with its cassette as their model (QUEUE-23). */
    const pool = (count: number, queue: string, folder: string, extra: string[] = []) => queues.start(count, queue, [...folderFlags(folder), ...extra]);

    /** delegate-run on the boss of `folder` with `flags`, its children queued on `queue`, traced to `trace`. */
    const runQueued = (folder: string, queue: string, trace: string, ...flags: string[]) =>
      runCli([bossOf(folder), '--json', '--quiet', ...flags, '--queue', queues.redis.url, '--queue-name', queue, '--trace', trace]);

    it('starts at most --max-runs runs in the whole tree spread over 2 workers, refusing the rest with budget_exceeded as in process', async () => {
      const queue = freshQueue();
      // 1 boss, 3 tasks, 9 parts: 13 runs, of which 6 may start.
      const folder = nestedTreeFolder(3, 3);
      // Two jobs at most on each, so the three tasks cannot all land on one worker.
      const started = await pool(2, queue, folder, ['--concurrency', '2']);
      const localTrace = join(tempDir(), 'local.jsonl');
      const local = await runCli([bossOf(folder), '--json', '--quiet', '--max-runs', '6', '--trace', localTrace]);
      const trace = join(tempDir(), 'queued.jsonl');
      const queued = await runQueued(folder, queue, trace, '--max-runs', '6');
      const events = readTrace(trace);
      // The children did run on the workers, and the tree as a whole stayed within its bound.
      const jobs = events.filter((event) => event.event === 'queue.job');
      expect(jobs.length).toBeGreaterThan(3);
      for (const worker of started) expect(jobs.some((job) => String(job.worker).endsWith(`:${worker.child.pid}`))).toBe(true);
      expect(events.filter((event) => event.event === 'run.started').length).toBeLessThanOrEqual(6);
      expect(readTrace(localTrace).filter((event) => event.event === 'run.started')).toHaveLength(6);
      // The refused delegations fail as in process: their calls fail with budget_exceeded, the same message and data.
      const refusals = (all: typeof events) =>
        all.filter((event) => event.event === 'call.failed' && String((event.error as { message?: string }).message).includes('would start run'));
      expect(refusals(events).length).toBeGreaterThan(0);
      for (const event of [...refusals(events), ...refusals(readTrace(localTrace))]) {
        expect(event).toMatchObject({ tool: 'part', error: { code: 'budget_exceeded', maxRuns: 6, runs: 6 } });
        expect(String((event.error as { message: string }).message)).toMatch(
          /would start run 7 of the run tree, past its limit of 6 runs \(maxRuns, --max-runs\)\.$/,
        );
      }
      // The tree stops as it does in process: the top run fails with budget_exceeded.
      expect(JSON.parse(local.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded' } });
      expect(JSON.parse(queued.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded' } });
      expect(queued.code).toBe(local.code);
    }, 60_000);

    it("bounds the tree's model calls in flight on one worker by --max-concurrency: the worker's jobs of the tree share its slots", async () => {
      const queue = freshQueue();
      const folder = fanOutFolder(3, { delayMs: 400 });
      await pool(1, queue, folder);
      const trace = join(tempDir(), 'trace.jsonl');
      const result = await runQueued(folder, queue, trace, '--max-concurrency', '1');
      expect(result.code).toBe(0);
      const events = readTrace(trace).filter((event) => event.depth === 1);
      const calls = [...new Set(events.map((event) => event.run))].map((run) => {
        const own = events.filter((event) => event.run === run);
        const at = (name: string) => Date.parse(String(own.find((event) => event.event === name)?.ts));
        return { from: at('model.request'), to: at('model.response') };
      });
      expect(calls).toHaveLength(3);
      // One at a time: no two children's model calls overlap, though all three jobs ran at once on the worker.
      calls.sort((a, b) => a.from - b.from);
      for (let index = 1; index < calls.length; index++) expect(calls[index]?.from).toBeGreaterThanOrEqual(calls[index - 1]?.to as number);
    }, 60_000);

    it('ends a timed-out job on its worker: the delegation fails with worker_error, and within 2 s the job and its own child ended cancelled', async () => {
      const queue = freshQueue();
      // boss → task → part, whose Activity hangs until its signal aborts.
      const folder = nestedTreeFolder(1, 1, { hang: true });
      await pool(1, queue, folder, ['--activities', join(folder, 'hang.mjs')]);
      const trace = join(tempDir(), 'trace.jsonl');
      // 3 s, so that even a loaded machine has the part hanging on the worker by then.
      const result = await runQueued(folder, queue, trace, '--queue-timeout', '3');
      const ended = Date.now();
      expect(result.code).toBe(0);
      const failed = readTrace(trace).find((event) => event.event === 'delegate.failed');
      expect(failed).toMatchObject({ code: 'worker_error', error: { timeoutMs: 3000 } });
      // Both jobs (the task the boss gave up on, and the part it waits for) ended on the worker, cancelled.
      let jobs = await jobsOf(queues.redis.url, queue);
      while (jobs.some((job) => job.state === 'active') && Date.now() - ended < 2000) {
        await new Promise((wait) => setTimeout(wait, 100));
        jobs = await jobsOf(queues.redis.url, queue);
      }
      expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ active: 0, waiting: 0 });
      expect(jobs).toHaveLength(2);
      for (const job of jobs) expect(job).toMatchObject({ state: 'completed', returnvalue: { result: { ok: false, error: { code: 'cancelled_by_user' } } } });
      // The Activity heard its signal.
      expect(existsSync(join(folder, 'hang-aborted'))).toBe(true);
    }, 60_000);

    it('removes a timed-out job no worker took: nothing stays waiting on the queue', async () => {
      const queue = freshQueue();
      const folder = fanOutFolder(1);
      const trace = join(tempDir(), 'trace.jsonl');
      const result = await runQueued(folder, queue, trace, '--queue-timeout', '1');
      expect(result.code).toBe(0);
      expect(readTrace(trace).find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'worker_error', error: { timeoutMs: 1000 } });
      expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ active: 0, waiting: 0 });
      // A worker started later finds nothing to run.
      await pool(1, queue, folder);
      await new Promise((wait) => setTimeout(wait, 500));
      expect(await jobsOf(queues.redis.url, queue)).toEqual([]);
    }, 60_000);
  },
);
