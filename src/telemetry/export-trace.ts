/** `delegate-run export`: a finished trace or journal sent to a collector after the fact, as the same spans a live export sends (TEL-10). */
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import type { TraceEventBase } from '../protocol/trace/events.js';
import type { TraceEvent } from '../protocol/trace/trace.js';
import { INSTRUMENTATION_NAME } from './open-telemetry.js';
import { startOtlpExport, type OtlpSettings } from './otlp-export.js';
import { SpanMapper } from './span-mapper.js';

/** What an export sent. */
export interface ExportedTrace {
  /** Spans the collector took. */
  spans: number;
  /** The trace ids of the top runs, in order. */
  traceIds: string[];
  /** True when an export failed: the collector down, refusing or too slow. */
  failed: boolean;
}

/** How many spans may end before `export` waits for the collector to take them: a file is read faster than any collector takes spans (TEL-10). */
const FLUSH_EVERY = 1024;

/** Random ids, but the trace id of a top run the trace recorded (`run.started.traceId`, TEL-7): the spans join the trace the run was in. */
class RecordedTraceIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: string | undefined;

  generateTraceId(): string {
    const id = this.next !== undefined && /^[0-9a-f]{32}$/.test(this.next) && !/^0+$/.test(this.next) ? this.next : this.random.generateTraceId();
    this.next = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}

/**
 * Sends the events of a trace or journal, in file order, as spans (TEL-10): the mapper of a live
 * export, every run mapped (a queued child's events are in the caller's file, relayed), and the
 * spans still open at the end (a run cut short) ended then.
 */
export async function exportEvents(
  events: AsyncIterable<TraceEventBase> | Iterable<TraceEventBase>,
  settings: OtlpSettings,
  say: (line: string) => void,
): Promise<ExportedTrace> {
  const ids = new RecordedTraceIds();
  // The queue holds what ends between flushes, and every span a trace cut short leaves open, ended at once by close().
  const exporting = startOtlpExport(settings, say, ids, Number.MAX_SAFE_INTEGER);
  let flushed = 0;
  const traceIds: string[] = [];
  const mapper = new SpanMapper(exporting.provider.getTracer(INSTRUMENTATION_NAME), {
    content: settings.content,
    leaveQueued: false,
    rootTraceId: (id) => {
      ids.next = id;
    },
  });
  for await (const event of events) {
    mapper.take(event as TraceEvent);
    if (event.event === 'run.started' && event.parent === null) {
      const id = mapper.contextOf(event.run)?.traceparent.split('-')[1];
      if (id !== undefined) traceIds.push(id);
    }
    if (exporting.ended - flushed >= FLUSH_EVERY) {
      // Waits for the collector, so spans never pile up faster than it takes them; a collector that failed ends the export.
      await exporting.provider.forceFlush().catch(() => undefined);
      flushed = exporting.ended;
      if (exporting.failed) break;
    }
  }
  mapper.close();
  await exporting.shutdown();
  return { spans: exporting.sent, traceIds, failed: exporting.failed };
}
