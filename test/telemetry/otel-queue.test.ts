// One trace across processes (spec/telemetry.md TEL-6, TEL-8): a queued fan-out's worker spans, sent by the workers, are children of the caller's calls.
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, offlineEnv, startCli } from '../helpers/cli.js';
import { type OtlpReceiver, parentOf, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { bossOf, fanOutFolder } from '../helpers/queue-fixture.js';
import { folderFlags, startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';

const MCP_BIN = resolve('dist/bundle/mcp.js');

/** Waits until the collector holds `count` spans of a name prefix past its first `from` (exporters send on their own schedule, about a second); bounded. */
async function spansArrived(collector: OtlpReceiver, prefix: string, count: number, from = 0): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (spansNamed(collector.spans.slice(from), prefix).length < count && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 100));
}

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
    await spansArrived(collector, 'invoke_agent task', 4);
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

  it('makes one trace of an MCP client’s call through delegate-mcp and a queued fan-out on the workers, each span under its caller', async () => {
    const before = collector.spans.length;
    const callerTrace = 'a3ce929d0e0e47364bf92f3577b34da6';
    const callerSpan = 'b7ad6b7169203331';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN, folder, '--model', `replay:${join(folder, 'boss.cassette.json')}`, '--queue', redis.url, '--otel', collector.url],
      env: offlineEnv() as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'planner-agent', version: '1.0.0' });
    await client.connect(transport);
    const result = await client.callTool({ name: 'boss', arguments: {}, _meta: { traceparent: `00-${callerTrace}-${callerSpan}-01` } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({ done: 4 });
    await client.close();
    await spansArrived(collector, 'invoke_agent task', 4, before);
    const spans = collector.spans.slice(before).filter((span) => span.traceId === callerTrace);
    const [boss, ...more] = spansNamed(spans, 'invoke_agent boss');
    expect(more).toEqual([]);
    // delegate-mcp's run continues the client's span…
    expect(boss?.parentSpanId).toBe(callerSpan);
    expect(boss?.service).toBe('delegate-mcp');
    // …its calls are its children…
    const calls = spansNamed(spans, 'execute_tool work');
    expect(calls).toHaveLength(4);
    for (const call of calls) expect(call.parentSpanId).toBe(boss?.spanId);
    // …and each queued child, run and sent by a worker, is the child of the call that delegated it.
    const tasks = spansNamed(spans, 'invoke_agent task');
    expect(tasks).toHaveLength(4);
    expect(tasks.map((task) => task.service)).toEqual(['delegate-worker', 'delegate-worker', 'delegate-worker', 'delegate-worker']);
    expect(new Set(tasks.map((task) => task.parentSpanId))).toEqual(new Set(calls.map((call) => call.spanId)));
    for (const task of tasks) expect(spans.some((span) => span.parentSpanId === task.spanId && span.name.startsWith('chat '))).toBe(true);
    // Nothing of the call went to another trace.
    expect(collector.spans.slice(before).filter((span) => span.traceId !== callerTrace)).toEqual([]);
  });
});
