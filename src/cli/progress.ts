/** Progress on stderr: one plain line per notable trace event (the live tree builds on the same events). */
import type { TraceEvent } from '../protocol/trace.js';

function indent(event: TraceEvent): string {
  return '  '.repeat(event.depth);
}

function tokens(usage: unknown): string {
  if (typeof usage !== 'object' || usage === null) return '';
  const record = usage as Record<string, unknown>;
  const cost = typeof record.costUsd === 'number' ? ` $${record.costUsd.toFixed(4)}` : '';
  return ` ${Number(record.inputTokens ?? 0)}→${Number(record.outputTokens ?? 0)} tokens${cost}`;
}

/** Formats an event as one progress line, or undefined for events not worth a line. */
export function progressLine(event: TraceEvent): string | undefined {
  const at = indent(event);
  switch (event.event) {
    case 'run.started':
      return `${at}▶ ${String(event.name ?? event.request)} (${String(event.model ?? 'no model')})`;
    case 'model.response':
      return `${at}  step ${String(event.step)}: ${String(event.model)}${tokens(event.usage)} ${String(event.ms)}ms`;
    case 'call.started':
      return `${at}  → ${String(event.tool)} [${String(event.call)}]`;
    case 'call.failed':
      return `${at}  ✗ ${String(event.tool)} [${String(event.call)}] ${(event.error as { code: string }).code}: ${(event.error as { message: string }).message}`;
    case 'delegate.started':
      return `${at}  ⇢ delegate ${String(event.delegate)} (${String(event.resolution)})`;
    case 'delegate.failed':
      return `${at}  ✗ delegate [${String(event.call)}] ${String(event.code)}`;
    case 'run.completed':
      return `${at}✓ done${tokens(event.usageTotal)}`;
    case 'run.failed':
      return `${at}✗ ${String(event.code)}: ${String(event.message)}`;
    default:
      return undefined;
  }
}

/** A trace listener writing plain progress lines to a stream. */
export function plainProgress(stream: NodeJS.WritableStream): (event: TraceEvent) => void {
  return (event) => {
    const line = progressLine(event);
    if (line !== undefined) stream.write(`${line}\n`);
  };
}
