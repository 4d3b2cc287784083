/** The library's door to OpenTelemetry export (spec/telemetry.md TEL-11): the export itself is imported only when called. */
import type { Tracer } from './protocol/trace/trace.js';
import type { OpenTelemetryOptions, OpenTelemetryTrace } from './telemetry/open-telemetry.js';

export type { OpenTelemetryOptions, OpenTelemetryTrace };

/**
 * Sends the spans of the runs `tracer` traces to OpenTelemetry by the GenAI semantic conventions
 * (TEL-2 to TEL-5), through `options.tracerProvider` or the global provider, and lets those runs
 * carry the trace context to queue workers, MCP servers and URL delegates (TEL-6). OpenTelemetry is
 * loaded now, never by a library user who does not call this.
 */
export async function traceToOpenTelemetry(tracer: Tracer, options: OpenTelemetryOptions = {}): Promise<OpenTelemetryTrace> {
  const { traceToOpenTelemetry: send } = await import('./telemetry/open-telemetry.js');
  return send(tracer, options);
}
