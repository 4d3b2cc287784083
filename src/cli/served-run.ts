/** How the servers (`delegate-mcp`, `delegate-serve --a2a`) run one Request for a client: as `delegate-run` runs one, each call a run tree of its own. */
import type { DelegatingRuntime } from '../create-runtime.js';
import type { ModelChooser } from '../models/choose-model.js';
import { cassetteForTree } from '../models/shared-cassette.js';
import type { ConfirmHook, RunResult } from '../protocol/contracts.js';
import type { TraceContext, Tracer } from '../protocol/trace/trace.js';
import { type CliIo, chooseModel, loadEntry, type ParsedArguments, queuedTop, runOptionsFor } from './run-setup.js';
import type { RunSession } from './run-session.js';

/** What one client's call gives its run: its cancellation, the tracer its progress listens to, and the approvals of its run tree. */
export interface ServedCall {
  signal: AbortSignal;
  tracer: Tracer;
  /** One approval session per run tree (CLI-12). */
  confirm: ConfirmHook;
  /** The client's trace context (`_meta.traceparent` of an MCP call), the parent of the run's spans (TEL-6). */
  traceContext?: TraceContext;
}

/** Delegate-run's options the servers refuse, each with why: each call brings its input and gets its result (MCP-8, A2A-11). */
export const SERVER_REFUSED_OPTIONS = {
  input: 'each call brings its own input',
  json: 'each result goes back to its caller',
  record: 'many runs cannot write one cassette',
} as const;

/**
 * Runs the Request at `reference` for one call as `delegate-run` runs one (MCP-11, A2A-4): the same
 * model choice, resolvers, confinement and bounds; a replayed cassette answers each call from its
 * start (CAS-17); the command's stop signal cancels it as the call's own does.
 */
export function servedRunner(args: ParsedArguments, io: CliIo, runtime: DelegatingRuntime, session: RunSession, say: (line: string) => void) {
  return async (reference: string, input: unknown, call: ServedCall): Promise<RunResult> => {
    if (session.sink) call.tracer.subscribe(session.sink);
    // The call's run continues the client's trace when it brings one (TEL-6).
    const stopSpans = session.telemetry?.attach(call.tracer, call.traceContext);
    try {
      const entry = await loadEntry(runtime, reference);
      const chosen = chooseModel(args, entry.loaded, runtime.models as ModelChooser, io, say);
      // Each call is a run tree of its own: a replayed cassette answers it from its start (CAS-17), across
      // the workers' processes too when its delegations are jobs (QUEUE-17, MCP-24).
      const { model, runId } = session.queue ? queuedTop(session.queue, chosen) : { model: chosen && cassetteForTree(chosen), runId: undefined };
      const signal = io.signal ? AbortSignal.any([io.signal, call.signal]) : call.signal;
      return await runtime.run(entry.loaded, {
        ...runOptionsFor(args, io),
        ...(input === undefined ? {} : { input }),
        ...(model ? { model } : {}),
        signal,
        tracer: call.tracer,
        confirm: call.confirm,
        trusted: entry.trusted,
        ...(runId === undefined ? {} : { runId }),
      });
    } finally {
      stopSpans?.();
    }
  };
}
