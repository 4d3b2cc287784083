/** A child's RunResult as JSON on the queue and back (QUEUE-2): its error keeps its code, message and data. */
import { ProtocolError, type ErrorCode, type ErrorJson } from '../protocol/errors.js';
import type { RunResult } from '../protocol/contracts.js';
import type { UsageSummary } from '../protocol/usage.js';

/** A RunResult as the job's return value carries it. */
export type RunResultJson =
  | { ok: true; run: string; output: unknown; meta?: Record<string, unknown> | null; usage: UsageSummary; usageTotal: UsageSummary }
  | { ok: false; run: string; error: ErrorJson; usage: UsageSummary; usageTotal: UsageSummary };

/** The result as JSON; the child's end context stays on the worker, as a parent never reads a child's (DEL-8). */
export function resultToJson(result: RunResult): RunResultJson {
  if (result.ok) {
    const { context: _context, ...rest } = result;
    return rest;
  }
  return { ok: false, run: result.run, error: result.error.toJSON(), usage: result.usage, usageTotal: result.usageTotal };
}

/** The result back from JSON: the error a ProtocolError again, of the same code, message and data. */
export function resultFromJson(json: RunResultJson): RunResult {
  if (json.ok) return json;
  const { code, message, ...data } = json.error;
  return { ok: false, run: json.run, error: new ProtocolError(code as ErrorCode, message, data), usage: json.usage, usageTotal: json.usageTotal };
}

/** The usage of a child that reported none of its own (it never ran, or its job failed). */
export function emptyUsage(): UsageSummary {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, steps: 0, toolCalls: 0, ms: 0 };
}

/** A child that never reported a result of its own: it failed with `error` and used nothing this process knows of. */
export function failedResult(run: string, error: ProtocolError): RunResult {
  return { ok: false, run, error, usage: emptyUsage(), usageTotal: emptyUsage() };
}
