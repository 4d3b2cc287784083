// A runtime for the built-in delegate tool (DEL-23): the shipped model catalog (or a given one), no API keys, and replayed answers.
import { createRuntime, type DelegatingRuntime } from '../../src/create-runtime.js';
import type { TierModels } from '../../src/models/choose-model.js';
import { ModelCatalog, type ModelsFile } from '../../src/models/model-catalog.js';
import { ModelProviders } from '../../src/models/model-providers.js';
import { ReplayModel } from '../../src/models/replay.js';
import type { CassetteEntry } from '../../src/models/cassette.js';
import { Tracer, memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';
import type { RunOptions, RunResult, Activity } from '../../src/protocol/contracts.js';
import type { RequestDocument } from '../../src/protocol/types.js';

/** A runtime whose catalog is the shipped models.json (without DELEGATE_MODELS), or `catalog`, with `tiers` overrides. */
export function tierRuntime(options: { catalog?: ModelsFile; tiers?: TierModels; activities?: Record<string, Activity> } = {}): DelegatingRuntime {
  const registry = options.catalog ? new ModelCatalog(options.catalog, { warn: () => {} }) : ModelCatalog.load({ env: {}, warn: () => {} });
  const providers = new ModelProviders({ registry });
  return createRuntime({
    root: process.cwd(),
    models: { providers, options: { cwd: process.cwd(), env: {} }, ...(options.tiers ? { tiers: options.tiers } : {}) },
    ...(options.activities ? { activities: options.activities } : {}),
  });
}

/** Runs `document` on a cassette of `entries` and collects the trace. */
export async function replayRun(
  runtime: DelegatingRuntime,
  document: RequestDocument,
  entries: CassetteEntry[],
  options: RunOptions = {},
): Promise<{ result: RunResult; events: TraceEvent[]; model: ReplayModel }> {
  const model = new ReplayModel(entries);
  const sink = memorySink();
  const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]), ...options });
  return { result, events: sink.events, model };
}

/** The events of one name. */
export function eventsOf(events: readonly TraceEvent[], name: string): TraceEvent[] {
  return events.filter((event) => event.event === name);
}

/** The tool names the Solution schema of a `model.request` offers. */
export function offeredTools(request: TraceEvent | undefined): string[] {
  const schema = request?.schema as { properties?: { calls?: { items?: { anyOf?: unknown[] } } }; $defs?: Record<string, unknown> } | undefined;
  const tools = schema?.properties?.calls?.items?.anyOf ?? [];
  return tools.map((tool) => {
    const written = tool as { $ref?: string; properties?: { _tool?: { const?: string } } };
    const resolved = written.$ref ? (schema?.$defs?.[written.$ref.replace('#/$defs/', '')] as typeof written) : written;
    return String(resolved?.properties?._tool?.const);
  });
}

/** The text of every message a `model.request` sent. */
export function promptOf(request: TraceEvent | undefined): string {
  return ((request?.messages as { content: string }[] | undefined) ?? []).map((message) => message.content).join('\n');
}
