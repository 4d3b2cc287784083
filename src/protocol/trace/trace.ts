/** The trace: one event per thing that happens, shared by a run and all its children, written as JSONL. */
import { notJsonPlaceholder, toJsonData } from '../json-data.js';
import type { TraceEventBase, TraceFieldsOf } from './events.js';

/**
 * An event as listeners receive it: the common fields (TRACE-1) and the event's own. Events the
 * runtime emits have the fields `TraceEventMap` names (narrow with `KnownTraceEvent`); an
 * Activity may emit events of its own with any fields.
 */
export interface TraceEvent extends TraceEventBase {
  [field: string]: unknown;
}

/** Receives events as they happen. */
export type TraceListener = (event: TraceEvent) => void;

/**
 * W3C trace context (`traceparent`, `tracestate`) of the span a piece of work belongs to, as it
 * travels with that work to another process or host (TEL-6): a queued job, an MCP call, a fetch.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/**
 * Where a tree's trace context comes from (TEL-6): an OpenTelemetry export listening to its
 * tracer. The core asks it, never the OpenTelemetry packages themselves.
 */
export interface TraceContextSource {
  /** The trace id of `run`'s span, opening that span now when it is not open yet (TEL-7); `undefined` when it has none. */
  traceIdOf(run: string, parent: string | null): string | undefined;
  /** The context of the call's span (`call` given) or of the run's, for work done on its behalf elsewhere; `undefined` when it has none. */
  contextOf(run: string, call?: string): TraceContext | undefined;
}

/** Fans events out to listeners; a run and all its descendants share one Tracer. */
export class Tracer {
  private readonly listeners = new Set<TraceListener>();
  /** Where the tree's trace context comes from, when something exports its spans (TEL-6). */
  private source: TraceContextSource | undefined;

  constructor(listeners: Iterable<TraceListener> = []) {
    for (const listener of listeners) this.listeners.add(listener);
  }

  /** True when someone listens: a run emits nothing to a Tracer without listeners. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: TraceListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes the tree's trace context from `source` (an OpenTelemetry export, TEL-6); `undefined` stops. */
  useContextSource(source: TraceContextSource | undefined): void {
    this.source = source;
  }

  /** The trace id of `run`'s span (TEL-7), when the tree's spans are exported. A failing source gives none: observers never change a run. */
  traceIdOf(run: string, parent: string | null): string | undefined {
    try {
      return this.source?.traceIdOf(run, parent);
    } catch {
      return undefined;
    }
  }

  /** The trace context of a call's span, or of a run's, to send with work done on its behalf elsewhere (TEL-6); `undefined` when none. */
  contextOf(run: string, call?: string): TraceContext | undefined {
    try {
      return this.source?.contextOf(run, call);
    } catch {
      return undefined;
    }
  }

  /** Emits an event to every listener. A failing listener never breaks the run. */
  emit(event: TraceEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // Observers must not change the outcome of a run.
      }
    }
  }
}

/** The millisecond last stamped, and its ISO time: the events of one millisecond share one string. */
let stampedAt = Number.NaN;
let stamp = '';

/**
 * The current time as an ISO string (TRACE-1). A fan-out emits many events a millisecond, and
 * formatting the date anew for each was most of what building an event cost.
 */
function traceTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = new Date(now).toISOString();
  }
  return stamp;
}

/** A Tracer view bound to one run: adds `ts`, `run`, `parent` and `depth` to what it emits. */
export class RunTrace {
  constructor(
    readonly tracer: Tracer,
    readonly run: string,
    readonly parent: string | null,
    readonly depth: number,
  ) {}

  /** True when the tracer has listeners: fields that cost something to build are built only then. */
  get listening(): boolean {
    return this.tracer.listening;
  }

  /**
   * Emits `event` with the common fields; a field of the same name never overrides them (TRACE-1).
   * An event the runtime emits takes exactly its `TraceEventMap` fields.
   */
  emit<E extends string>(event: E, ...[fields = {}]: TraceFieldsOf<E>): void {
    if (!this.tracer.listening) return;
    const { ts: _ts, event: _event, run: _run, parent: _parent, depth: _depth, ...own } = fields as Record<string, unknown>;
    this.tracer.emit({ ts: traceTime(), event, run: this.run, parent: this.parent, depth: this.depth, ...own });
  }
}

/** How many replaced parts a `traceNote` names before it counts the rest. */
const NOTED_PARTS = 10;

/**
 * One JSONL line for an event. An event holding something JSON cannot (a value nested too deeply
 * to serialise, a BigInt, a cycle) is still written: each such part is replaced by the string
 * `"[not JSON: <why>]"` and the event gains a `traceNote` naming where (TRACE-13).
 */
export function traceLine(event: TraceEvent): string {
  try {
    return `${JSON.stringify(event)}\n`;
  } catch {
    const notes: string[] = [];
    const safe = toJsonData(event, {
      replace: ({ pointer, problem }) => {
        notes.push(`${pointer} is ${problem}`);
        return notJsonPlaceholder({ pointer, problem });
      },
    }) as Record<string, unknown>;
    const more = notes.length > NOTED_PARTS ? ` and ${notes.length - NOTED_PARTS} more` : '';
    const traceNote = `Parts that are not JSON were replaced: ${notes.slice(0, NOTED_PARTS).join('; ')}${more}.`;
    return `${JSON.stringify({ ...safe, traceNote })}\n`;
  }
}

/** A listener that keeps events in memory (tests, library users). */
export function memorySink(): TraceListener & { events: TraceEvent[] } {
  const events: TraceEvent[] = [];
  const listener = ((event: TraceEvent) => {
    events.push(event);
  }) as TraceListener & { events: TraceEvent[] };
  listener.events = events;
  return listener;
}
