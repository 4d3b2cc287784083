/** A run tree's spans sent to OpenTelemetry as it runs (TEL-2): a tracer's events mapped by the span mapper, and its context handed to the core (TEL-6). */
import { context, defaultTextMapGetter, ROOT_CONTEXT, trace, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { TraceContext, Tracer } from '../protocol/trace/trace.js';
import { SpanMapper } from './span-mapper.js';

/** The instrumentation scope our spans are made under. */
export const INSTRUMENTATION_NAME = 'delegate-run';

/** How {@link traceToOpenTelemetry} sends a tree's spans. */
export interface OpenTelemetryOptions {
  /** The provider spans are made by: an application's own; default the global one (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Prompts, answers, inputs and outputs as attributes (TEL-4); default false. */
  content?: boolean;
  /**
   * The W3C context the tree's top run continues (TEL-6): an MCP call's `_meta`, a queued job's.
   * Default: the active context's span, so an application's own span is the top run's parent.
   */
  parent?: TraceContext;
}

/** Sending a tree's spans: `stop` ends the spans still open and stops listening. */
export interface OpenTelemetryTrace {
  stop(): void;
}

const propagator = new W3CTraceContextPropagator();

/**
 * Sends the spans of the runs `tracer` traces to OpenTelemetry (TEL-2) and gives the core the
 * trace context it propagates (TEL-6). A run executed as a queued job is left to the worker that
 * runs it (TEL-8).
 */
export function traceToOpenTelemetry(tracer: Tracer, options: OpenTelemetryOptions = {}): OpenTelemetryTrace {
  const provider = options.tracerProvider ?? trace.getTracerProvider();
  const mapper = new SpanMapper(provider.getTracer(INSTRUMENTATION_NAME), {
    content: options.content ?? false,
    parent: parentContext(options.parent),
    leaveQueued: true,
  });
  const unsubscribe = tracer.subscribe((event) => mapper.take(event));
  tracer.useContextSource(mapper);
  return {
    stop() {
      unsubscribe();
      tracer.useContextSource(undefined);
      mapper.close();
    },
  };
}

/** The context a W3C trace context stands for, else the active one (an application's span). */
function parentContext(given: TraceContext | undefined): ReturnType<typeof context.active> {
  if (given === undefined) return context.active();
  const carrier: Record<string, string> = { traceparent: given.traceparent, ...(given.tracestate ? { tracestate: given.tracestate } : {}) };
  const extracted = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  // A malformed traceparent is ignored, as the W3C rules say: the run begins a trace of its own.
  return trace.getSpanContext(extracted) ? extracted : context.active();
}
