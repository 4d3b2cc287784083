/** A recorded trace of requests/music (producer → composer → sound-designer, plus a direct sound-designer), with readable ids and costs. */
import type { TraceEvent } from '../../src/protocol/trace.js';

/** The events of one producer run, in the order the runtime emitted them (times scaled to be readable). */
export const musicEvents: TraceEvent[] = [
  { ts: '2026-01-01T12:00:00.000Z', event: 'run.started', run: 'run_producer', parent: null, depth: 0, request: 'requests/music/producer.json', name: 'producer', model: 'replay:requests/music/producer.cassette.json' },
  { ts: '2026-01-01T12:00:00.160Z', event: 'model.request', run: 'run_producer', parent: null, depth: 0, step: 0, attempt: 0 },
  { ts: '2026-01-01T12:00:00.280Z', event: 'call.started', run: 'run_producer', parent: null, depth: 0, call: '0.0', tool: 'compose' },
  { ts: '2026-01-01T12:00:00.360Z', event: 'call.started', run: 'run_producer', parent: null, depth: 0, call: '0.1', tool: 'design_sound' },
  { ts: '2026-01-01T12:00:00.380Z', event: 'model.response', run: 'run_producer', parent: null, depth: 0, step: 0, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 640, outputTokens: 88, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0021, ms: 220 },
  { ts: '2026-01-01T12:00:01.400Z', event: 'delegate.started', run: 'run_producer', parent: null, depth: 0, call: '0.0', child: 'run_composer', delegate: 'requests/music/composer.json', name: 'composer', resolution: 'runtime', scopes: [], model: 'replay:requests/music/producer.cassette.json', tier: null },
  { ts: '2026-01-01T12:00:01.400Z', event: 'run.started', run: 'run_composer', parent: 'run_producer', depth: 1, request: 'requests/music/composer.json', name: 'composer', model: 'replay:requests/music/producer.cassette.json' },
  { ts: '2026-01-01T12:00:01.560Z', event: 'model.request', run: 'run_composer', parent: 'run_producer', depth: 1, step: 0, attempt: 0 },
  { ts: '2026-01-01T12:00:01.640Z', event: 'call.started', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.0', tool: 'melody' },
  { ts: '2026-01-01T12:00:01.720Z', event: 'call.started', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.1', tool: 'synth' },
  { ts: '2026-01-01T12:00:01.740Z', event: 'call.completed', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.0', tool: 'melody' },
  { ts: '2026-01-01T12:00:01.760Z', event: 'model.response', run: 'run_composer', parent: 'run_producer', depth: 1, step: 0, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 520, outputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0016, ms: 200 },
  { ts: '2026-01-01T12:00:01.800Z', event: 'delegate.started', run: 'run_producer', parent: null, depth: 0, call: '0.1', child: 'run_sound_direct', delegate: 'requests/music/sound-designer.json', name: 'sound-designer', resolution: 'runtime', scopes: [], model: 'replay:requests/music/producer.cassette.json', tier: null },
  { ts: '2026-01-01T12:00:01.800Z', event: 'run.started', run: 'run_sound_direct', parent: 'run_producer', depth: 1, request: 'requests/music/sound-designer.json', name: 'sound-designer', model: 'replay:requests/music/producer.cassette.json' },
  { ts: '2026-01-01T12:00:01.820Z', event: 'model.request', run: 'run_sound_direct', parent: 'run_producer', depth: 1, step: 0, attempt: 0 },
  { ts: '2026-01-01T12:00:01.840Z', event: 'model.response', run: 'run_sound_direct', parent: 'run_producer', depth: 1, step: 0, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 205, outputTokens: 66, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0006, ms: 20 },
  { ts: '2026-01-01T12:00:01.840Z', event: 'run.completed', run: 'run_sound_direct', parent: 'run_producer', depth: 1, output: null, usage: { inputTokens: 205, outputTokens: 66, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0006, steps: 1, toolCalls: 0, ms: 40 }, usageTotal: { inputTokens: 205, outputTokens: 66, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0006, steps: 1, toolCalls: 0, ms: 40 } },
  { ts: '2026-01-01T12:00:01.840Z', event: 'delegate.completed', run: 'run_producer', parent: null, depth: 0, call: '0.1', child: 'run_sound_direct', usage: { inputTokens: 205, outputTokens: 66, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0006, steps: 1, toolCalls: 0, ms: 40 } },
  { ts: '2026-01-01T12:00:01.840Z', event: 'call.completed', run: 'run_producer', parent: null, depth: 0, call: '0.1', tool: 'design_sound' },
  { ts: '2026-01-01T12:00:01.860Z', event: 'delegate.started', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.1', child: 'run_sound_nested', delegate: 'requests/music/sound-designer.json', name: 'sound-designer', resolution: 'runtime', scopes: [], model: 'replay:requests/music/producer.cassette.json', tier: null },
  { ts: '2026-01-01T12:00:01.860Z', event: 'run.started', run: 'run_sound_nested', parent: 'run_composer', depth: 2, request: 'requests/music/sound-designer.json', name: 'sound-designer', model: 'replay:requests/music/producer.cassette.json' },
  { ts: '2026-01-01T12:00:01.860Z', event: 'model.request', run: 'run_sound_nested', parent: 'run_composer', depth: 2, step: 0, attempt: 0 },
  { ts: '2026-01-01T12:00:01.860Z', event: 'model.response', run: 'run_sound_nested', parent: 'run_composer', depth: 2, step: 0, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 210, outputTokens: 70, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0007, ms: 0 },
  { ts: '2026-01-01T12:00:01.860Z', event: 'run.completed', run: 'run_sound_nested', parent: 'run_composer', depth: 2, output: null, usage: { inputTokens: 210, outputTokens: 70, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0007, steps: 1, toolCalls: 0, ms: 0 }, usageTotal: { inputTokens: 210, outputTokens: 70, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0007, steps: 1, toolCalls: 0, ms: 0 } },
  { ts: '2026-01-01T12:00:01.880Z', event: 'delegate.completed', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.1', child: 'run_sound_nested', usage: { inputTokens: 210, outputTokens: 70, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0007, steps: 1, toolCalls: 0, ms: 0 } },
  { ts: '2026-01-01T12:00:01.880Z', event: 'call.completed', run: 'run_composer', parent: 'run_producer', depth: 1, call: '0.1', tool: 'synth' },
  { ts: '2026-01-01T12:00:01.880Z', event: 'model.request', run: 'run_composer', parent: 'run_producer', depth: 1, step: 1, attempt: 0 },
  { ts: '2026-01-01T12:00:01.880Z', event: 'model.response', run: 'run_composer', parent: 'run_producer', depth: 1, step: 1, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 760, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0019, ms: 0 },
  { ts: '2026-01-01T12:00:01.880Z', event: 'run.completed', run: 'run_composer', parent: 'run_producer', depth: 1, output: null, usage: { inputTokens: 1280, outputTokens: 170, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0035, steps: 2, toolCalls: 2, ms: 480 }, usageTotal: { inputTokens: 1490, outputTokens: 240, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0042, steps: 2, toolCalls: 2, ms: 480 } },
  { ts: '2026-01-01T12:00:01.880Z', event: 'delegate.completed', run: 'run_producer', parent: null, depth: 0, call: '0.0', child: 'run_composer', usage: { inputTokens: 1490, outputTokens: 240, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0042, steps: 2, toolCalls: 2, ms: 480 } },
  { ts: '2026-01-01T12:00:01.880Z', event: 'call.completed', run: 'run_producer', parent: null, depth: 0, call: '0.0', tool: 'compose' },
  { ts: '2026-01-01T12:00:01.900Z', event: 'model.request', run: 'run_producer', parent: null, depth: 0, step: 1, attempt: 0 },
  { ts: '2026-01-01T12:00:01.900Z', event: 'model.response', run: 'run_producer', parent: null, depth: 0, step: 1, attempt: 0, model: 'replay:requests/music/producer.cassette.json', usage: { inputTokens: 1180, outputTokens: 120, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.0035, ms: 0 },
  { ts: '2026-01-01T12:00:01.900Z', event: 'run.completed', run: 'run_producer', parent: null, depth: 0, output: { title: 'Rain on Empty Streets' }, usage: { inputTokens: 1820, outputTokens: 208, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0056, steps: 2, toolCalls: 2, ms: 1920 }, usageTotal: { inputTokens: 3515, outputTokens: 514, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0104, steps: 2, toolCalls: 2, ms: 1920 } },
];

/** The epoch milliseconds of the first event. */
export const musicStart = Date.parse('2026-01-01T12:00:00.000Z');

/** The epoch milliseconds of the last event. */
export const musicEnd = Date.parse(musicEvents[musicEvents.length - 1]?.ts ?? '');
