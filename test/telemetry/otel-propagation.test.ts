// Trace context out of and into a run (spec/telemetry.md TEL-6, TEL-11): URL delegate fetches, the mcp toolset's calls, delegate-mcp's tool calls.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { traceToOpenTelemetry } from '../../src/index.js';
import { Tracer } from '../../src/protocol/trace/trace.js';
import { startOtlpExport } from '../../src/telemetry/otlp-export.js';
import { exited, offlineEnv, startCli, tempDir } from '../helpers/cli.js';
import { type OtlpReceiver, parentOf, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { bossOf, fanOutFolder, taskRequest } from '../helpers/queue-fixture.js';
import { stepModel } from '../helpers/step-model.js';

const MCP_BIN = resolve('dist/bundle/mcp.js');
const NOTES_SERVER = resolve('test/fixtures/mcp/notes-server.mjs');
/** A caller's span, as another agent would send it. */
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  closing.push(() => started.close());
  return started;
}

/** The `traceparent` of a span. */
function traceparentOf(span: { traceId: string; spanId: string }): RegExp {
  return new RegExp(`^00-${span.traceId}-${span.spanId}-0[01]$`);
}

describe('trace context out of a run (TEL-6)', () => {
  it("sends the delegating call's context with the fetch of a URL delegate", async () => {
    const seen: Record<string, string | string[] | undefined>[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(taskRequest()));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    closing.push(() => new Promise((done) => server.close(() => done())));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const folder = fanOutFolder(1);
    const boss = JSON.parse(readFileSync(bossOf(folder), 'utf8'));
    boss.context[1].tool.work._delegate = `http://${host}/task.json`;
    writeFileSync(bossOf(folder), JSON.stringify(boss));
    const collector = await receiver();
    const result = await exited(startCli([bossOf(folder), '--otel', collector.url, '--allow-host', host]).done, 'the run', 30_000);
    expect(result.code, result.stderr).toBe(0);
    const [call] = spansNamed(collector.spans, 'execute_tool work');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.traceparent).toMatch(traceparentOf(call as never));
    // The fetched delegate's run is the call's child, as any delegation.
    expect(parentOf(collector.spans, spansNamed(collector.spans, 'invoke_agent task')[0] as never)).toBe(call);
  });

  it("sends the calling span's context in the _meta of an mcp toolset's tools/call, through an application's own TracerProvider", async () => {
    const root = tempDir();
    const log = join(root, 'notes.log');
    writeFileSync(
      join(root, 'keeper.json'),
      JSON.stringify({
        meta: { name: 'notes-keeper' },
        context: [
          { type: 'system', text: 'Keep notes.' },
          { type: 'toolset', toolset: 'mcp', command: process.execPath, args: [NOTES_SERVER], env: { NOTES_LOG: log } },
        ],
        schema: { type: 'string' },
      }),
    );
    const collector = await receiver();
    // The application's provider, exporting where it likes: the library sends its spans through it (TEL-11).
    const application = startOtlpExport(
      { url: `${collector.url}/v1/traces`, headers: {}, serviceName: 'app', timeoutMs: 5000, content: false },
      () => undefined,
    );
    const runtime = createRuntime({ root });
    const tracer = new Tracer();
    const sending = await traceToOpenTelemetry(tracer, { tracerProvider: application.provider });
    const model = stepModel(
      () => ({ calls: [{ _tool: 'read_note', name: 'todo' }], output: null }),
      () => ({ calls: [], output: 'done' }),
    );
    const result = await runtime.run(await runtime.load(join(root, 'keeper.json')), { model, tracer });
    sending.stop();
    await runtime.resolvers.close?.();
    await application.shutdown();
    expect(result.ok).toBe(true);
    const [call] = spansNamed(collector.spans, 'execute_tool read_note');
    expect(call?.service).toBe('app');
    const sent = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('traceparent '));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.slice('traceparent '.length)).toMatch(traceparentOf(call as never));
  });
});

describe('trace context into a run (TEL-6, TEL-11)', () => {
  it('continues a given W3C context, and ignores a malformed one: the run then begins a trace of its own', async () => {
    const collector = await receiver();
    const application = startOtlpExport(
      { url: `${collector.url}/v1/traces`, headers: {}, serviceName: 'app', timeoutMs: 5000, content: false },
      () => undefined,
    );
    const runtime = createRuntime({ root: tempDir() });
    const document = { meta: { name: 'greeter' }, context: [{ type: 'system', text: 'Greet.' }], schema: { type: 'string' } };
    for (const traceparent of [`00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'not a traceparent', `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`]) {
      const tracer = new Tracer();
      const sending = await traceToOpenTelemetry(tracer, { tracerProvider: application.provider, parent: { traceparent } });
      expect((await runtime.run(document, { model: stepModel(() => ({ calls: [], output: 'hello' })), tracer })).ok).toBe(true);
      sending.stop();
    }
    await application.shutdown();
    const [continued, malformed, invalid] = spansNamed(collector.spans, 'invoke_agent greeter').sort((a, b) => a.startMs - b.startMs);
    expect(continued).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    for (const own of [malformed, invalid]) {
      expect(own?.parentSpanId).toBe('');
      expect(own?.traceId).not.toBe(CALLER_TRACE);
    }
  });
});

describe('trace context into delegate-mcp (TEL-6)', () => {
  it("makes a tool call's run a child of the span in the request's _meta", async () => {
    const collector = await receiver();
    const folder = fanOutFolder(2);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN, folder, '--model', `replay:${join(folder, 'boss.cassette.json')}`, '--otel', collector.url],
      env: offlineEnv() as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'caller', version: '1.0.0' });
    await client.connect(transport);
    const result = await client.callTool({
      name: 'boss',
      arguments: {},
      _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=1' },
    });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    // An unrelated call without a context begins a trace of its own.
    await client.callTool({ name: 'boss', arguments: {} });
    await client.close();
    const deadline = Date.now() + 15_000;
    while (spansNamed(collector.spans, 'invoke_agent boss').length < 2 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 100));
    const [continued, own] = spansNamed(collector.spans, 'invoke_agent boss').sort((a, b) =>
      a.traceId === CALLER_TRACE ? -1 : b.traceId === CALLER_TRACE ? 1 : 0,
    );
    expect(continued?.traceId).toBe(CALLER_TRACE);
    expect(continued?.parentSpanId).toBe(CALLER_SPAN);
    expect(continued?.service).toBe('delegate-mcp');
    const inCallerTrace = collector.spans.filter((span) => span.traceId === CALLER_TRACE);
    expect(spansNamed(inCallerTrace, 'invoke_agent task')).toHaveLength(2);
    expect(own?.traceId).not.toBe(CALLER_TRACE);
    expect(own?.parentSpanId).toBe('');
  });
});
