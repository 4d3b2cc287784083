// The span mapper on a wide fan-out (spec/telemetry.md TEL-2): ending a run ends its own open spans without a scan of every run's.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { SpanMapper } from '../../src/telemetry/span-mapper.js';
import { wideTrace } from '../helpers/wide-trace.js';

describe('SpanMapper on a wide fan-out', () => {
  it('maps 20,000 runs open at once, every span ended at its own event, within a generous bound', { timeout: 60_000 }, () => {
    const runs = 20_000;
    const events = wideTrace(runs) as unknown as TraceEvent[];
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const mapper = new SpanMapper(provider.getTracer('test'), { leaveQueued: false });
    const started = performance.now();
    for (const event of events) mapper.take(event);
    const elapsed = performance.now() - started;
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(runs);
    // Ended by the events, not by close(): a retried attempt carries its retry, the top run its end.
    expect(spans.some((span) => span.events.some((event) => event.name === 'model.retry'))).toBe(true);
    mapper.close();
    // Linear work takes about a second here; ending each run by scanning every open span took minutes.
    expect(elapsed).toBeLessThan(30_000);
  });
});
