// OpenTelemetry export of a run (spec/telemetry.md): what a loopback OTLP/HTTP collector receives from `delegate-run --otel`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, startCli, tempDir } from '../helpers/cli.js';
import { bossOf, fanOutFolder } from '../helpers/queue-fixture.js';
import { type OtlpReceiver, parentOf, type ReceivedSpan, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(mode?: 'ok' | 'down' | 'stall'): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(mode ? { mode } : {});
  receivers.push(started);
  return started;
}

/** Runs the CLI to its end, bounded. */
async function run(args: string[], env: Record<string, string> = {}) {
  return exited(startCli(args, { env }).done, `delegate-run ${args.join(' ')}`, 30_000);
}

/** Every attribute value of every span, as one string to search. */
function allText(spans: readonly ReceivedSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.attributes, span.events]));
}

describe('delegate-run --otel', () => {
  it('sends a run with delegations as invoke_agent, chat and execute_tool spans, each delegated run under its call, all one trace', async () => {
    const collector = await receiver();
    const folder = fanOutFolder(2);
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await run([bossOf(folder), '--otel', collector.url, '--trace', trace, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).ok).toBe(true);
    const spans = collector.spans;
    const [boss, ...others] = spansNamed(spans, 'invoke_agent boss');
    expect(others).toEqual([]);
    expect(boss?.parentSpanId).toBe('');
    expect(boss?.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'boss', 'delegate_run.depth': 0 });
    expect(boss?.attributes['gen_ai.usage.input_tokens']).toBe(300 + 400 + 2 * 100);
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([boss?.traceId]));
    // The JSONL trace names the trace, so the two views can be joined (TEL-7).
    const events = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const started = events.filter((event) => event.event === 'run.started');
    expect(started.map((event) => event.traceId)).toEqual([boss?.traceId, boss?.traceId, boss?.traceId]);
    const chats = spansNamed(spans, 'chat ');
    expect(chats).toHaveLength(4);
    for (const chat of chats) {
      expect(chat.kind).toBe(3); // CLIENT
      expect(chat.attributes['gen_ai.operation.name']).toBe('chat');
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.response.finish_reasons']).toEqual(expect.arrayContaining([expect.stringMatching(/^(stop|tool_calls)$/)]));
      expect(chat.attributes['delegate_run.cost_usd']).toBeTypeOf('number');
    }
    const calls = spansNamed(spans, 'execute_tool work');
    expect(calls).toHaveLength(2);
    const tasks = spansNamed(spans, 'invoke_agent task');
    expect(tasks).toHaveLength(2);
    for (const call of calls) {
      expect(parentOf(spans, call)).toBe(boss);
      expect(call.attributes).toMatchObject({ 'gen_ai.tool.name': 'work', 'gen_ai.operation.name': 'execute_tool', 'delegate_run.resolution': 'runtime' });
      expect(call.attributes['gen_ai.tool.call.id']).toBeTypeOf('string');
    }
    // Each delegated run is a child of the call that delegated it (TEL-2).
    expect(new Set(tasks.map((task) => parentOf(spans, task)?.spanId))).toEqual(new Set(calls.map((call) => call.spanId)));
    for (const task of tasks) expect(task.attributes['delegate_run.depth']).toBe(1);
    // Times come from the events: every child lies within its parent.
    for (const span of spans) {
      const parent = parentOf(spans, span);
      if (parent) expect(span.startMs >= parent.startMs && span.endMs <= parent.endMs, `${span.name} within ${parent.name}`).toBe(true);
    }
  });

  it('sends no prompt, answer, input or output without --otel-content, and sends them with it', async () => {
    const plain = await receiver();
    const folder = fanOutFolder(1);
    expect((await run([bossOf(folder), '--otel', plain.url])).code).toBe(0);
    expect(plain.spans.length).toBeGreaterThan(0);
    const text = allText(plain.spans);
    expect(text).not.toContain('Hand out the tasks.');
    expect(text).not.toContain('Do the task.');
    expect(text).not.toContain('gen_ai.input.messages');
    expect(text).not.toContain('gen_ai.tool.call.arguments');
    const content = await receiver();
    expect((await run([bossOf(folder), '--otel', content.url, '--otel-content'])).code).toBe(0);
    const chat = spansNamed(content.spans, 'chat ').find((span) => String(span.attributes['gen_ai.input.messages']).includes('Hand out the tasks.'));
    expect(chat?.attributes['gen_ai.output.messages']).toContain('work');
    expect(spansNamed(content.spans, 'execute_tool work')[0]?.attributes['gen_ai.tool.call.arguments']).toContain('"n":0');
  });

  it('sets the error status with the typed code of a run that failed', async () => {
    const collector = await receiver();
    const result = await run([bossOf(fanOutFolder(1)), '--otel', collector.url, '--max-steps', '1']);
    expect(result.code).toBe(1);
    const [boss] = spansNamed(collector.spans, 'invoke_agent boss');
    expect(boss?.status.code).toBe(2); // ERROR
    expect(boss?.status.message).toMatch(/^max_steps_exceeded: /);
    expect(boss?.attributes['error.type']).toBe('max_steps_exceeded');
  });

  it('turns on with the standard variables: the endpoint, the service name and the headers', async () => {
    const collector = await receiver();
    const result = await run([bossOf(fanOutFolder(1))], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'billing-agents',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=agents,authorization=Bearer%20abc',
    });
    expect(result.code, result.stderr).toBe(0);
    expect(collector.spans.length).toBeGreaterThan(0);
    expect(new Set(collector.spans.map((span) => span.service))).toEqual(new Set(['billing-agents']));
    expect(collector.requests[0]?.path).toBe('/v1/traces');
    expect(collector.requests[0]?.headers).toMatchObject({ 'x-team': 'agents', authorization: 'Bearer abc' });
  });

  it('takes --otel alone before the request, sending to the variables’ endpoint', async () => {
    const collector = await receiver();
    const result = await run(['--otel', bossOf(fanOutFolder(1)), '--json'], { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(result.code, result.stderr).toBe(0);
    expect(spansNamed(collector.spans, 'invoke_agent boss')).toHaveLength(1);
  });

  it('refuses an endpoint that is not an http(s) URL, naming where it came from', async () => {
    const result = await run([bossOf(fanOutFolder(1))], { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT expects an http(s) URL');
  });

  it('never fails the run when the collector is down: one warning line on stderr, --json clean', async () => {
    const collector = await receiver('down');
    const result = await run([bossOf(fanOutFolder(2)), '--otel', collector.url, '--json'], { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).ok).toBe(true);
    expect(result.stderr.match(/OpenTelemetry: cannot send spans/g)).toHaveLength(1);
    expect(collector.requests.length).toBeGreaterThan(0);
  });

  it('never hangs the run when the collector stalls: the export is given up after its time limit', async () => {
    const collector = await receiver('stall');
    const result = await run([bossOf(fanOutFolder(1)), '--otel', collector.url, '--json'], { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).ok).toBe(true);
    expect(result.stderr.match(/OpenTelemetry: cannot send spans/g)).toHaveLength(1);
  });
});

/** A span's shape without its ids and times: name, parent's name, kind, status and attributes. */
function shapes(spans: readonly ReceivedSpan[]): unknown[] {
  return spans
    .map((span) => ({ name: span.name, parent: parentOf(spans, span)?.name ?? null, kind: span.kind, status: span.status, attributes: span.attributes }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describe('delegate-run export', () => {
  it('sends a finished trace as the spans the live run sent: the same names, parentage, attributes, times and trace id', async () => {
    const live = await receiver();
    const trace = join(tempDir(), 'trace.jsonl');
    const folder = fanOutFolder(3);
    expect((await run([bossOf(folder), '--otel', live.url, '--trace', trace])).code).toBe(0);
    const after = await receiver();
    const result = await run(['export', trace, '--otel', after.url]);
    expect(result.code, result.stderr).toBe(0);
    const traceId = live.spans[0]?.traceId as string;
    expect(result.stdout).toBe(`Sent ${live.spans.length} spans to ${after.url}/v1/traces: trace ${traceId}.\n`);
    expect(shapes(after.spans)).toEqual(shapes(live.spans));
    expect(new Set(after.spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
    // Times are the events' (to the millisecond they record), but for the top run's start, taken as its run.started is built.
    const byName = (spans: readonly ReceivedSpan[]) => spans.map((span) => `${span.name} ${Math.round(span.endMs)}`).sort();
    expect(byName(after.spans)).toEqual(byName(live.spans));
  });

  it('exits 1 when the collector does not take the spans, and 2 for a file that is not a trace', async () => {
    const live = await receiver();
    const trace = join(tempDir(), 'trace.jsonl');
    expect((await run([bossOf(fanOutFolder(1)), '--otel', live.url, '--trace', trace])).code).toBe(0);
    const down = await receiver('down');
    const failed = await run(['export', trace, '--otel', down.url], { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('OpenTelemetry: cannot send spans');
    const notTrace = join(tempDir(), 'not.jsonl');
    (await import('node:fs')).writeFileSync(notTrace, '{"hello":1}\n');
    const bad = await run(['export', notTrace, '--otel', live.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not.jsonl:1');
  });
});
