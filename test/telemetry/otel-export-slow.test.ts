// `delegate-run export` to a slow collector (spec/telemetry.md TEL-9, TEL-10): a file is read faster than spans are taken, and none may be lost.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, startCli, tempDir } from '../helpers/cli.js';
import { type OtlpReceiver, spansNamed, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { otlpSettings, startOtlpExport } from '../../src/telemetry/otlp-export.js';
import { wideTrace } from '../helpers/wide-trace.js';

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

describe('delegate-run export to a slow collector', () => {
  it('waits for the collector instead of dropping spans: every span of a 3,000-run trace arrives, and the count printed is the count sent', async () => {
    const collector = await startOtlpReceiver({ delayMs: 250 });
    receivers.push(collector);
    const trace = join(tempDir(), 'wide.jsonl');
    writeFileSync(
      trace,
      `${wideTrace(3000)
        .map((event) => JSON.stringify(event))
        .join('\n')}\n`,
    );
    const result = await exited(startCli(['export', trace, '--otel', collector.url]).done, 'delegate-run export', 60_000);
    expect(result.code, result.stderr).toBe(0);
    expect(spansNamed(collector.spans, 'invoke_agent')).toHaveLength(3000);
    expect(result.stdout).toMatch(new RegExp(`^Sent ${collector.spans.length} spans to `));
  }, 90_000);

  it('says spans dropped from a full queue once, as a failed export, instead of counting them sent', async () => {
    const collector = await startOtlpReceiver({ delayMs: 250 });
    receivers.push(collector);
    const said: string[] = [];
    const settings = otlpSettings({ otel: collector.url }, {}, 'test') as NonNullable<ReturnType<typeof otlpSettings>>;
    const exporting = startOtlpExport(settings, (line) => said.push(line), undefined, 4);
    const tracer = exporting.provider.getTracer('test');
    for (let index = 0; index < 50; index++) tracer.startSpan(`span ${index}`).end();
    await exporting.shutdown();
    expect(exporting.ended).toBe(50);
    expect(exporting.sent).toBe(collector.spans.length);
    expect(exporting.sent).toBeLessThan(50);
    expect(exporting.failed).toBe(true);
    expect(said).toEqual([expect.stringMatching(/cannot send spans .*\(\d+ of 50 spans were dropped/)]);
  });
});
