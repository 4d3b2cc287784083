/** One command's OpenTelemetry export (TEL-1): the provider and exporter its settings say, every run tree attached to it, closed once at exit. */
import type { TraceContext, Tracer } from '../protocol/trace/trace.js';
import { traceToOpenTelemetry } from './open-telemetry.js';
import { otlpSettings, startOtlpExport } from './otlp-export.js';

/** The export flags as parsed. */
export interface TelemetryFlags {
  /** `--otel [endpoint]`: `''` for the flag alone. */
  otel?: string;
  /** `--otel-content`. */
  otelContent?: boolean;
}

/** A command's export, started: each run tree's tracer is attached, and it is closed once, at exit. */
export interface CommandTelemetry {
  /** Sends the spans of what `tracer` traces, the top run continuing `parent` when given (TEL-6); returns the function that stops. */
  attach(tracer: Tracer, parent?: TraceContext): () => void;
  /** Ends what is open and sends what is pending, within the export's time limit (TEL-9). */
  close(): Promise<void>;
}

/** The export of a command whose flags or variables turned it on (TEL-1); throws a UsageError for a bad endpoint. */
export function commandTelemetry(
  flags: TelemetryFlags,
  env: Record<string, string | undefined>,
  serviceName: string,
  say: (line: string) => void,
): CommandTelemetry | undefined {
  const settings = otlpSettings(flags, env, serviceName);
  if (!settings) return undefined;
  const exporting = startOtlpExport(settings, say);
  const attached = new Set<() => void>();
  return {
    attach(tracer, parent) {
      const sending = traceToOpenTelemetry(tracer, { tracerProvider: exporting.provider, content: settings.content, ...(parent ? { parent } : {}) });
      const stop = () => {
        if (!attached.delete(stop)) return;
        sending.stop();
      };
      attached.add(stop);
      return stop;
    },
    async close() {
      for (const stop of [...attached]) stop();
      await exporting.shutdown();
    },
  };
}
