// `--otel` on the unlucky paths (spec/telemetry.md TEL-9): SIGTERM mid-run, a collector that stalls, answers 500 or cuts the connection.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, readTrace, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { bossOf, fanOutFolder } from '../helpers/queue-fixture.js';
import { type OtlpReceiver, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

async function receiver(mode?: 'ok' | 'stall'): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(mode ? { mode } : {});
  closing.push(() => started.close());
  return started;
}

/** A collector that answers every export with `answer`: a status, or `cut` (the connection destroyed once the body is read). */
async function badCollector(answer: number | 'cut'): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      if (answer === 'cut') request.socket.destroy();
      else response.writeHead(answer, { 'content-type': 'text/plain' }).end('collector broke');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

describe('delegate-run --otel on the unlucky paths', () => {
  it('on SIGTERM mid-run, exits 143 with the cancelled spans sent: every run ended, the top one with its error', async () => {
    const collector = await receiver();
    const trace = join(tempDir(), 'trace.jsonl');
    const { child, done } = startCli([
      'test/fixtures/slow/request.json',
      '--activities',
      'test/fixtures/hardening/stubborn.mjs',
      '--trace',
      trace,
      '--otel',
      collector.url,
    ]);
    await waitFor(() => existsSync(trace) && readTrace(trace).some((event) => event.event === 'call.started' && event.depth === 1));
    child.kill('SIGTERM');
    const result = await exited(done, 'SIGTERM', 20_000);
    expect(result.code).toBe(143);
    const runs = spansNamed(collector.spans, 'invoke_agent');
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(run.status.message).toMatch(/^cancelled_by_user: /);
    const top = runs.find((run) => run.parentSpanId === '');
    expect(top?.attributes['error.type']).toBe('cancelled_by_user');
  });

  it('on SIGTERM while the collector stalls, still exits 143, bounded by the export time limit', async () => {
    const collector = await receiver('stall');
    const trace = join(tempDir(), 'trace.jsonl');
    const { child, done } = startCli(
      ['test/fixtures/slow/request.json', '--activities', 'test/fixtures/hardening/stubborn.mjs', '--trace', trace, '--otel', collector.url],
      { env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' } },
    );
    await waitFor(() => existsSync(trace) && readTrace(trace).some((event) => event.event === 'call.started' && event.depth === 1));
    child.kill('SIGTERM');
    const result = await exited(done, 'SIGTERM with a stalled collector', 20_000);
    expect(result.code).toBe(143);
    expect(result.stderr.match(/OpenTelemetry: cannot send spans/g)).toHaveLength(1);
  });

  for (const answer of [500, 'cut'] as const) {
    it(`never fails the run when the collector ${answer === 'cut' ? 'cuts the connection' : 'answers 500'}: one warning, --json clean`, async () => {
      const collector = await badCollector(answer);
      const result = await exited(
        startCli([bossOf(fanOutFolder(2)), '--otel', collector.url, '--json'], { env: { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' } }).done,
        `collector ${answer}`,
        30_000,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).ok).toBe(true);
      expect(result.stderr.match(/OpenTelemetry: cannot send spans/g)).toHaveLength(1);
      expect(collector.requests()).toBeGreaterThan(0);
    });

    it(`export exits 1 when the collector ${answer === 'cut' ? 'cuts the connection' : 'answers 500'}, saying why once`, async () => {
      const live = await receiver();
      const trace = join(tempDir(), 'trace.jsonl');
      expect((await exited(startCli([bossOf(fanOutFolder(1)), '--otel', live.url, '--trace', trace]).done, 'run', 30_000)).code).toBe(0);
      const collector = await badCollector(answer);
      const result = await exited(startCli(['export', trace, '--otel', collector.url], { env: { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' } }).done, 'export', 30_000);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.match(/OpenTelemetry: cannot send spans/g)).toHaveLength(1);
    });
  }
});
