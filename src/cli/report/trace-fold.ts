/** One typed fold of trace events, which the progress tree, the cost tree and the viewer's data all read a trace through. */
import { type KnownTraceEvent, type TraceEventBase, type TraceEventName, type TraceEventOf, knownTraceEvent } from '../../protocol/trace/events.js';

/** The events a fold reads, each handled by a function given that event's own fields; a fold leaves out the events it does not read. */
export type TraceHandlers<R> = { [E in TraceEventName]?: (event: TraceEventOf<E>) => R };

/**
 * Hands one event to the handler of its name and returns what it returns; an event the fold has
 * no handler for, or that no version of the runtime emits, gives `otherwise`, so traces with more
 * events than a fold knows read the same (CLI-17).
 */
export function foldEvent<R>(event: TraceEventBase, handlers: TraceHandlers<R>, otherwise: R): R {
  const known = knownTraceEvent(event);
  if (known === undefined) return otherwise;
  const handler = handlers[known.event] as ((event: KnownTraceEvent) => R) | undefined;
  return handler === undefined ? otherwise : handler(known);
}
