/** The trace: one event per thing that happens, shared by a run and all its children, written as JSONL. */
import { closeSync, openSync, writeSync } from 'node:fs';

/** Fields every event carries (spec/trace.md TRACE-1). */
export interface TraceEvent {
  ts: string;
  event: string;
  run: string;
  parent: string | null;
  depth: number;
  [field: string]: unknown;
}

/** Receives events as they happen. */
export type TraceListener = (event: TraceEvent) => void;

/** Fans events out to listeners; a run and all its descendants share one Tracer. */
export class Tracer {
  private readonly listeners = new Set<TraceListener>();

  constructor(listeners: Iterable<TraceListener> = []) {
    for (const listener of listeners) this.listeners.add(listener);
  }

  /** Adds a listener; returns a function that removes it. */
  subscribe(listener: TraceListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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

/** A Tracer view bound to one run: adds `ts`, `run`, `parent` and `depth` to what it emits. */
export class RunTrace {
  constructor(
    readonly tracer: Tracer,
    readonly run: string,
    readonly parent: string | null,
    readonly depth: number,
  ) {}

  /** Emits `event` with the common fields; a field of the same name never overrides them (TRACE-1). */
  emit(event: string, fields: Record<string, unknown> = {}): void {
    const { ts: _ts, event: _event, run: _run, parent: _parent, depth: _depth, ...own } = fields;
    this.tracer.emit({ ts: new Date().toISOString(), event, run: this.run, parent: this.parent, depth: this.depth, ...own });
  }
}

/**
 * A listener writing JSONL to a file synchronously, so every event is on disk the moment it
 * happens (a SIGINT or crash still leaves a complete trace). `close()` releases the file.
 */
export function jsonlFileSink(path: string): TraceListener & { close(): void } {
  const descriptor = openSync(path, 'w');
  let open = true;
  const listener = ((event: TraceEvent) => {
    if (open) writeSync(descriptor, `${JSON.stringify(event)}\n`);
  }) as TraceListener & { close(): void };
  listener.close = () => {
    if (!open) return;
    open = false;
    closeSync(descriptor);
  };
  return listener;
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
