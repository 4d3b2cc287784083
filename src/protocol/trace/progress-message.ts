/** The words a server tells its client for a trace event while a run goes on: MCP's progress notifications (MCP-11) and A2A's status updates (A2A-7). */
import type { TraceEvent } from './trace.js';

/**
 * A progress line for a trace event: a step a run's model answered, a delegation started or ended;
 * undefined for other events. `names` holds each run's name by its id, as `run.started` said it.
 */
export function progressMessage(event: TraceEvent, names: ReadonlyMap<string, string>): string | undefined {
  const name = names.get(event.run) ?? event.run;
  if (event.event === 'model.response') return `${name}: step ${Number(event.step) + 1} answered`;
  if (event.event === 'delegate.started') return `${name} delegated to ${String(event.name)}`;
  if (event.event === 'delegate.completed') return `${name}: delegation to ${names.get(String(event.child)) ?? String(event.child)} done`;
  if (event.event === 'delegate.failed')
    return `${name}: delegation to ${names.get(String(event.child)) ?? String(event.child)} failed (${String(event.code)})`;
  return undefined;
}
