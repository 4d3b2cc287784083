// A job whose worker is alive but busy keeps its lock, and a job taken over does not run a non-idempotent Activity again unasked nor lose what its abandoned attempt paid (QUEUE-30 to QUEUE-32); real redis-server, real delegate-worker processes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { exited, folderWith, readTrace, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { bossOf, bossRequest, taskRequest } from '../helpers/queue-fixture.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import { folderFlags } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable } from '../helpers/redis-server.js';

/** What the task's answers cost: step 0 asks for the charge, step 1 ends the run. */
const TASK_STEP_0 = { inputTokens: 100, outputTokens: 10 };
const TASK_STEP_1 = { inputTokens: 7, outputTokens: 1 };
const BOSS_STEPS = [
  { inputTokens: 300, outputTokens: 50 },
  { inputTokens: 400, outputTokens: 20 },
];

/**
 * A boss delegating one task whose first answer calls `charge`, an Activity marked `idempotent: false`
 * that appends a line to `charged` in the folder, then blocks the event loop for CHARGE_BUSY_MS and
 * waits CHARGE_SLEEP_MS (both from the worker's environment). With `pauseFirst`, the task's first
 * answer calls `pause` instead (idempotent: a line in `paused`, then PAUSE_MS of waiting), and its
 * second the charge.
 */
function chargeFolder(options: { pauseFirst?: boolean } = {}): string {
  const task = taskRequest({
    charge: { description: 'Charges the card, once.', properties: { amount: { type: 'number' } }, required: ['amount'] },
    pause: { description: 'Waits a moment.', properties: {} },
  });
  const boss = bossRequest();
  const cassette = {
    version: 1,
    entries: [
      { match: { request: 'boss', step: 0 }, solution: { calls: [{ _tool: 'work', n: 0, _outputPath: '†state.r0' }], output: null }, usage: BOSS_STEPS[0] },
      { match: { request: 'boss', step: 1 }, repeat: true, solution: { calls: [], output: { done: 1 } }, usage: BOSS_STEPS[1] },
      ...(options.pauseFirst
        ? [{ match: { request: 'task', step: 0 }, repeat: true, solution: { calls: [{ _tool: 'pause' }], output: null }, usage: TASK_STEP_1 }]
        : []),
      {
        match: { request: 'task', step: options.pauseFirst ? 1 : 0 },
        repeat: true,
        solution: { calls: [{ _tool: 'charge', amount: 5 }], output: null },
        usage: TASK_STEP_0,
      },
      { match: { request: 'task', step: options.pauseFirst ? 2 : 1 }, repeat: true, solution: { calls: [], output: 'charged' }, usage: TASK_STEP_1 },
    ],
  };
  const folder = folderWith({ 'boss.json': boss, 'task.json': task, 'boss.cassette.json': cassette }, 'delegate-redelivery-');
  writeFileSync(
    join(folder, 'charge.mjs'),
    `import { appendFileSync } from 'node:fs';
export default {
  charge: Object.assign(
    async () => {
      appendFileSync(${JSON.stringify(join(folder, 'charged'))}, process.pid + '\\n');
      const until = Date.now() + Number(process.env.CHARGE_BUSY_MS ?? 0);
      while (Date.now() < until) {}
      await new Promise((wait) => setTimeout(wait, Number(process.env.CHARGE_SLEEP_MS ?? 0)));
      return 'charged';
    },
    { idempotent: false },
  ),
  pause: async () => {
    appendFileSync(${JSON.stringify(join(folder, 'paused'))}, process.pid + '\\n');
    await new Promise((wait) => setTimeout(wait, Number(process.env.PAUSE_MS ?? 0)));
    return 'paused';
  },
};
`,
  );
  return folder;
}

/** The lines of a marker (`charged`, `paused`): one per time its Activity ran. */
function charges(folder: string, marker = 'charged'): string[] {
  const path = join(folder, marker);
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean) : [];
}

let queues = 0;
const freshQueue = () => `r${process.pid}-${++queues}`;

describe.skipIf(!redisAvailable)(redisAvailable ? 'a job redelivered, on a real redis-server' : `queue redelivery tests, ${REDIS_SKIP_REASON}`, () => {
  const pool = useQueuePool();

  it('keeps the lock of a job whose Activity blocks the event loop past the lock: a second worker never takes it over, the non-idempotent Activity runs once (QUEUE-30)', async () => {
    const queue = freshQueue();
    const folder = chargeFolder();
    // Two workers with a lock of 1 s, each checking for stalled jobs every 0.5 s; the charge blocks its worker's event loop for 4 s.
    await pool.start(2, queue, ['--lock-seconds', '1', '--activities', join(folder, 'charge.mjs'), ...folderFlags(folder)], { CHARGE_BUSY_MS: '4000' });
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli([bossOf(folder), '--json', '--quiet', '--queue', pool.redis.url, '--queue-name', queue, '--trace', trace]);
    const result = await exited(done, 'the parent of a busy worker', 45_000);
    expect(result.code, result.stderr).toBe(0);
    expect(charges(folder)).toHaveLength(1);
    const attempts = readTrace(trace).filter((event) => event.event === 'queue.job');
    expect(attempts.map((event) => event.attempt)).toEqual([1]);
  }, 60_000);

  it('does not run the non-idempotent Activity of a SIGKILLed worker again unasked, and counts what both attempts paid, marked retried (QUEUE-31, QUEUE-32)', async () => {
    const queue = freshQueue();
    const folder = chargeFolder();
    const flags = ['--activities', join(folder, 'charge.mjs'), ...folderFlags(folder)];
    const [doomed] = await pool.start(1, queue, ['--lock-seconds', '1', ...flags], { CHARGE_SLEEP_MS: '60000' });
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli([bossOf(folder), '--json', '--quiet', '--queue', pool.redis.url, '--queue-name', queue, '--trace', trace]);
    // Killed inside the charge: its effect happened, its end never did.
    await waitFor(() => charges(folder).length === 1, 20_000);
    doomed?.child.kill('SIGKILL');
    // The rescuer's charge would end at once: run again, it shows as a second line, not as a hang.
    await pool.start(1, queue, ['--lock-seconds', '10', ...flags]);
    const result = await exited(done, 'the parent of a killed worker', 45_000);
    expect(result.code, result.stderr).toBe(0);
    expect(charges(folder)).toHaveLength(1);
    const events = readTrace(trace);
    expect(events.filter((event) => event.event === 'queue.job').map((event) => event.attempt)).toEqual([1, 2]);
    // The second attempt asked the worker's policy (strict) before running the charge again, as a resume does (JOURNAL-5), and was refused.
    expect(events.find((event) => event.event === 'approval.decided' && event.tool === 'charge')).toMatchObject({ decision: 'rejected', by: 'policy:strict' });
    expect(events.find((event) => event.event === 'call.failed' && event.tool === 'charge')).toMatchObject({
      error: { code: 'rejected_by_user', rerun: true },
    });
    // What the abandoned attempt paid (the task's step 0) is counted with what the finishing one paid (steps 0 and 1), and marked.
    const retried = events.find((event) => event.event === 'queue.retried');
    expect(retried).toMatchObject({ attempts: [1], usage: { inputTokens: TASK_STEP_0.inputTokens, outputTokens: TASK_STEP_0.outputTokens } });
    // With exactly its fields (TRACE-24), in the child's name.
    expect(Object.keys(retried ?? {}).sort()).toEqual(['attempts', 'depth', 'event', 'job', 'parent', 'run', 'ts', 'usage']);
    expect(retried?.depth).toBe(1);
    const usage = JSON.parse(result.stdout).usage;
    const sum = (field: 'inputTokens' | 'outputTokens') =>
      BOSS_STEPS[0][field] + BOSS_STEPS[1][field] + TASK_STEP_0[field] + (TASK_STEP_0[field] + TASK_STEP_1[field]);
    expect({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }).toEqual({
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
    });
    // And the delegation's own usage in the trace says the same.
    const completed = events.find((event) => event.event === 'delegate.completed');
    expect(completed).toMatchObject({ usage: { inputTokens: 2 * TASK_STEP_0.inputTokens + TASK_STEP_1.inputTokens } });
  }, 60_000);

  it('lets a worker stopped mid-job, whose job was taken over, run no non-idempotent call when it goes on: its record needs the lock (QUEUE-31)', async () => {
    const queue = freshQueue();
    const folder = chargeFolder({ pauseFirst: true });
    const flags = ['--activities', join(folder, 'charge.mjs'), ...folderFlags(folder)];
    const [stopped] = await pool.start(1, queue, ['--lock-seconds', '1', ...flags], { PAUSE_MS: '3000' });
    if (!stopped) throw new Error('no worker started');
    const trace = join(tempDir(), 'trace.jsonl');
    const { done } = startCli([bossOf(folder), '--json', '--quiet', '--queue', pool.redis.url, '--queue-name', queue, '--trace', trace]);
    // Stopped whole, its lock-keeping thread too, before it reached the charge: the lock lapses and another worker takes the job.
    await waitFor(() => charges(folder, 'paused').length === 1, 20_000);
    stopped.child.kill('SIGSTOP');
    try {
      await pool.start(1, queue, ['--lock-seconds', '10', ...flags]);
      const result = await exited(done, 'the parent of a stopped worker', 45_000);
      expect(result.code, result.stderr).toBe(0);
      expect(charges(folder)).toHaveLength(1);
      const root = String(readTrace(trace)[0]?.run);
      // Going on, the stopped worker reaches the charge with a lock that is no longer its own.
      stopped.child.kill('SIGCONT');
      const client = new Redis(pool.redis.port, '127.0.0.1');
      try {
        const refused = async () => JSON.stringify(await client.xrange(`delegate-run:${queue}:trace:${root}`, '-', '+')).includes('lost its lock');
        const started = Date.now();
        while (!(await refused())) {
          if (Date.now() - started > 20_000) throw new Error('the stopped worker never reached the charge');
          await new Promise((wait) => setTimeout(wait, 200));
        }
      } finally {
        client.disconnect();
      }
      expect(charges(folder)).toHaveLength(1);
    } finally {
      stopped.child.kill('SIGCONT');
    }
  }, 90_000);
});
