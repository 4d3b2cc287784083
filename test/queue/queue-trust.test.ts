// Workers trust no job (QUEUE-23, QUEUE-24): jobs written straight to the queue with the bullmq package, as anyone who can write to Redis could, on a real redis-server with a delegate-worker process.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteChild } from '../../src/protocol/contracts.js';
import { jobOf } from '../../src/queue/queue-job.js';
import type { JobReturn } from '../../src/queue/queue-child-runner.js';
import { folderWith, tempDir } from '../helpers/cli.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import { REDIS_SKIP_REASON, redisAvailable } from '../helpers/redis-server.js';
import type { WorkerProcess } from '../helpers/queue-workers.js';

const answer = (request: string) => ({
  match: { request, step: 0 },
  repeat: true,
  solution: { calls: [], output: 'done' },
  usage: { inputTokens: 1, outputTokens: 1 },
});

/** The worker's folder: a task it may run, and the cassette its command line names. */
const folder = folderWith(
  {
    'task.json': { meta: { name: 'task' }, context: [{ type: 'system', text: 'Do the task.' }, { type: 'input' }], schema: { type: 'string' } },
    'task.cassette.json': { version: 1, entries: [answer('task'), answer('evil')] },
  },
  'delegate-trust-',
);
const cassette = join(folder, 'task.cassette.json');

/** A file outside the worker's root whose first character a job must not learn. */
const secretFolder = tempDir('delegate-secret-');
const secret = join(secretFolder, 'secret.json');
writeFileSync(secret, 'Xsecret');

/** What a job's MCP server would create, were its command run. */
const marker = join(tempDir('delegate-marker-'), 'ran');
const evilToolset = { type: 'toolset', toolset: 'mcp', command: 'sh', args: ['-c', `touch ${marker}`] };

const parent = { run: 'run_000000000001', depth: 0, callId: 'call_1', root: 'run_000000000001' };
let ids = 0;
const nextId = () => `run_${(++ids).toString(16).padStart(12, '0')}`;

/** A well-formed child of today's job format for the worker's task. */
function taskChild(overrides: Partial<RemoteChild> = {}): RemoteChild {
  return {
    id: nextId(),
    parent,
    request: { document: { context: [], schema: { type: 'string' } }, location: join(folder, 'task.json'), name: 'task' },
    model: `replay:${cassette}`,
    trusted: true,
    options: {},
    limits: { maxRuns: 10, maxConcurrency: 4 },
    scoped: [],
    input: { n: 1 },
    ...overrides,
  };
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'a worker that trusts no job, on a real redis-server' : `queue trust tests, ${REDIS_SKIP_REASON}`, () => {
  const queues = useQueuePool();
  const QUEUE = `trust${process.pid}`;
  const SIGNED = `signed${process.pid}`;
  let attacker: Queue;
  let events: QueueEvents;
  let signedQueue: Queue;
  let signedEvents: QueueEvents;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    const connection = { host: '127.0.0.1', port: queues.redis.port };
    attacker = new Queue(QUEUE, { connection });
    events = new QueueEvents(QUEUE, { connection });
    signedQueue = new Queue(SIGNED, { connection });
    signedEvents = new QueueEvents(SIGNED, { connection });
    await Promise.all([events.waitUntilReady(), signedEvents.waitUntilReady()]);
    // The tree is alive, as its caller would keep it (QUEUE-25): the jobs run rather than start cancelled.
    const redis = new Redis(queues.redis.url);
    for (const queue of [QUEUE, SIGNED]) await redis.set(`delegate-run:${queue}:alive:${parent.root}`, '1', 'EX', 600);
    redis.disconnect();
    const flags = ['--root', folder, '--model', `replay:${cassette}`];
    workers = [...(await queues.start(1, QUEUE, flags)), ...(await queues.start(1, SIGNED, flags, { DELEGATE_QUEUE_KEY: 'the key' }))];
  }, 30_000);

  afterAll(async () => {
    await Promise.all([attacker?.close(), events?.close(), signedQueue?.close(), signedEvents?.close()]);
  });

  /** Adds `data` as a job, as any client of the queue could, and waits for what the worker returns. */
  async function answerOf(data: unknown, on: 'open' | 'signed' = 'open'): Promise<JobReturn> {
    const [queue, ended] = on === 'open' ? [attacker, events] : [signedQueue, signedEvents];
    const job: Job = await queue.add('child', data, { jobId: nextId() });
    return (await job.waitUntilFinished(ended, 15_000)) as JobReturn;
  }

  it('runs no command and opens no file for jobs that bring trust, an MCP toolset or a cassette path of their own', async () => {
    // Today's format with trust and a toolset: refused by its shape, nothing run.
    const trusted = await answerOf({
      ...taskChild(),
      request: {
        document: { context: [{ type: 'system', text: 'x' }, evilToolset], schema: { type: 'string' } },
        location: join(folder, 'evil.json'),
        name: 'evil',
      },
    });
    expect(trusted.result).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    // A document carried whole runs untrusted: its MCP server is never started.
    const whole = await answerOf(
      jobOf(
        taskChild({
          request: {
            document: { context: [{ type: 'system', text: 'x' }, evilToolset], schema: { type: 'string' } },
            location: 'anonymous:evil',
            name: 'evil',
          },
          scoped: undefined,
        }),
        undefined,
      ),
    );
    expect(whole.result).toMatchObject({ ok: true, output: 'done' });
    // Nor does a toolset added to a document of the worker's own make it trusted.
    const lent = await answerOf(jobOf(taskChild({ scoped: [evilToolset as never] }), undefined));
    expect(lent.result).toMatchObject({ ok: true, output: 'done' });
    expect(existsSync(marker)).toBe(false);

    // A cassette the job names is never opened: the answer says nothing of the file.
    const replay = await answerOf(jobOf(taskChild({ model: `replay:${secret}` }), undefined));
    expect(replay.result).toMatchObject({ ok: false, error: { code: 'usage_error' } });
    const message = (replay.result as { error: { message: string } }).error.message;
    expect(message).toContain(`The job asks for the model "replay:${secret}", which this worker was not given`);
    expect(message.replace(secret, '')).not.toMatch(/Xsecret|'X'|Unexpected|ENOENT|valid JSON/);
    // Nor a document outside the worker's root, by a path that climbs out or by an absolute one.
    const base = jobOf(taskChild(), undefined).child;
    for (const reference of [`../${secretFolder.split('/').pop()}/secret.json`, secret]) {
      const outside = await answerOf({ child: { ...base, id: nextId(), request: { reference, context: [] } } });
      expect(outside.result).toMatchObject({ ok: false, error: { code: 'delegate_forbidden' } });
      expect(JSON.stringify(outside.result)).not.toContain('Xsecret');
    }
  }, 60_000);

  it('fails a malformed job with invalid_request naming the pointer, then runs a good one', async () => {
    const missing = await answerOf({ child: { id: 'run_x' } });
    expect(missing.result).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect((missing.result as { error: { message: string } }).error.message).toMatch(
      /^The job (run_[0-9a-f]{12}) is not a child run's job \(spec\/queue\.md QUEUE-2\):\n {2}job \1#\/child: Expected property "parent" to be present\./,
    );
    const wrongType = await answerOf({ child: { ...jobOf(taskChild(), undefined).child, parent: { ...parent, depth: 'deep' } } });
    expect((wrongType.result as { error: { message: string } }).error.message).toMatch(/#\/child\/parent\/depth: .*integer/);
    const nothing = await answerOf(undefined);
    expect(nothing.result).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    const good = await answerOf(jobOf(taskChild(), undefined));
    expect(good.result).toMatchObject({ ok: true, output: 'done' });
    expect(workers[0]?.stderr()).toContain('refused job');
  }, 60_000);

  it('refuses unsigned and badly signed jobs when it holds a key, and runs one signed with it', async () => {
    const unsigned = await answerOf(jobOf(taskChild(), undefined), 'signed');
    expect(unsigned.result).toMatchObject({ ok: false, error: { code: 'delegate_forbidden' } });
    expect((unsigned.result as { error: { message: string } }).error.message).toContain('it is not signed');
    const forged = await answerOf(jobOf(taskChild(), 'another key'), 'signed');
    expect((forged.result as { error: { message: string } }).error.message).toContain("its signature is not that of the queue's key");
    const signed = jobOf(taskChild(), 'the key');
    const tampered = await answerOf({ ...signed, child: { ...signed.child, input: { n: 2 } } }, 'signed');
    expect((tampered.result as { error: { message: string } }).error.message).toContain("its signature is not that of the queue's key");
    // The trace context travels signed with the rest (TEL-6): one changed on the way is refused too, and a good one runs.
    const traced = jobOf(taskChild(), 'the key', { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
    const retraced = { ...traced, child: { ...traced.child, traceContext: { traceparent: `00-${'c'.repeat(32)}-${'b'.repeat(16)}-01` } } };
    expect(((await answerOf(retraced, 'signed')).result as { error: { message: string } }).error.message).toContain(
      "its signature is not that of the queue's key",
    );
    expect((await answerOf(traced, 'signed')).result).toMatchObject({ ok: true, output: 'done' });
    const good = await answerOf(jobOf(taskChild(), 'the key'), 'signed');
    expect(good.result).toMatchObject({ ok: true, output: 'done' });
    // Only the keyless worker warned at start.
    expect(workers[0]?.stderr()).toContain('DELEGATE_QUEUE_KEY is not set');
    expect(workers[1]?.stderr()).not.toContain('DELEGATE_QUEUE_KEY is not set');
  }, 60_000);
});
