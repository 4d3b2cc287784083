// One trace across processes (spec/telemetry.md TEL-6, TEL-8): a queued fan-out's worker spans, sent by the workers, are children of the caller's calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, startCli } from '../helpers/cli.js';
import { type OtlpReceiver, parentOf, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { bossOf, fanOutFolder } from '../helpers/queue-fixture.js';
import { folderFlags, startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';

describe.skipIf(!redisAvailable)(`a queued fan-out with --otel${redisAvailable ? '' : ` (${REDIS_SKIP_REASON})`}`, () => {
  let redis: TestRedis;
  let collector: OtlpReceiver;
  let workers: WorkerProcess[] = [];
  const folder = fanOutFolder(4);

  beforeAll(async () => {
    [redis, collector] = await Promise.all([startRedis(), startOtlpReceiver()]);
    workers = await startWorkers(redis.url, 2, [...folderFlags(folder), '--otel', collector.url]);
  }, 30_000);

  afterAll(async () => {
    await stopWorkers(workers);
    await Promise.all([redis?.stop(), collector?.close()]);
  });

  it("sends the workers' spans under the caller's calls, once each, all in the caller's trace", async () => {
    const result = await exited(startCli([bossOf(folder), '--queue', redis.url, '--otel', collector.url, '--json']).done, 'the queued run', 30_000);
    expect(result.code, result.stderr).toBe(0);
    // The workers send their spans on their own schedule (about a second): wait for all four.
    const deadline = Date.now() + 15_000;
    while (spansNamed(collector.spans, 'invoke_agent task').length < 4 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 100));
    const spans = collector.spans;
    const [boss, ...more] = spansNamed(spans, 'invoke_agent boss');
    expect(more).toEqual([]);
    expect(boss?.service).toBe('delegate-run');
    const tasks = spansNamed(spans, 'invoke_agent task');
    // Each child once: the caller relays the workers' events for its trace file but leaves their spans to them (TEL-8).
    expect(tasks).toHaveLength(4);
    const calls = spansNamed(spans, 'execute_tool work');
    expect(calls).toHaveLength(4);
    for (const task of tasks) {
      expect(task.service).toBe('delegate-worker');
      expect(task.traceId).toBe(boss?.traceId);
      expect(calls.map((call) => call.spanId)).toContain(task.parentSpanId);
      expect(task.attributes['delegate_run.queue.job']).toBeTypeOf('string');
      expect(task.attributes['delegate_run.queue.worker']).toMatch(/:\d+$/);
      // The worker's model calls are under its run.
      expect(spans.filter((span) => span.parentSpanId === task.spanId && span.name.startsWith('chat '))).toHaveLength(1);
    }
    expect(new Set(tasks.map((task) => task.parentSpanId)).size).toBe(4);
    for (const call of calls) expect(parentOf(spans, call)).toBe(boss);
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([boss?.traceId]));
  });
});
