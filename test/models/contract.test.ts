/** The contract every Model honours, run against each provider: replay, OpenAI and Anthropic (the last two through loopback servers). */
import { afterEach, describe, expect, it } from 'vitest';
import type { Call, Solution } from '../../src/protocol/types.js';
import type { Usage } from '../../src/protocol/usage.js';
import { AnthropicModel } from '../../src/models/anthropic.js';
import type { Model, ModelRequest } from '../../src/protocol/model.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ReplayModel } from '../../src/models/replay.js';
import { anthropicStream, anthropicUsage } from './support/anthropic-wire.js';
import { pieces, startServer, type Handler, type LoopbackServer } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';
import { solutionSchema } from './support/solution-schema.js';

/** What the model should answer. */
interface Scenario {
  solution: Solution;
  usage: Usage;
  /** Stop mid-answer and wait (to test cancellation). */
  hang?: boolean;
}

/** A provider under test. */
interface Harness {
  name: string;
  prefix: string;
  start(scenario: Scenario): Promise<{ model: Model; expectedCost: number | null }>;
}

const price = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2.5 };
const costOf = (usage: Usage): number =>
  (usage.inputTokens * price.input + usage.outputTokens * price.output + usage.cacheReadTokens * price.cacheRead + usage.cacheWriteTokens * price.cacheWrite) /
  1e6;

let servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function serve(handler: Handler): Promise<string> {
  const server = await startServer([handler]);
  servers.push(server);
  return server.url;
}

const harnesses: Harness[] = [
  {
    name: 'replay',
    prefix: 'replay:',
    start: async ({ solution, usage, hang }) => ({
      model: new ReplayModel([{ solution: solution as unknown as Record<string, unknown>, usage, ...(hang && { delayMs: 60_000 }) }]),
      expectedCost: 0,
    }),
  },
  {
    name: 'OpenAI',
    prefix: 'openai:',
    start: async ({ solution, usage, hang }) => {
      const url = await serve(
        openAIStream(
          pieces(JSON.stringify(solution), 9),
          openAIUsage(usage.inputTokens, usage.outputTokens, usage.cacheReadTokens),
          hang ? { holdAfter: 2, hang: true } : {},
        ),
      );
      const registry = new ModelCatalog({ models: { 'openai:test-model': { price } } });
      return { model: new OpenAIModel({ model: 'test-model', env: { OPENAI_API_KEY: 'k' }, baseUrl: url, registry }), expectedCost: costOf(usage) };
    },
  },
  {
    name: 'Anthropic',
    prefix: 'anthropic:',
    start: async ({ solution, usage, hang }) => {
      const wire = anthropicUsage(usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens);
      const url = await serve(anthropicStream(pieces(JSON.stringify(solution), 9), wire, hang ? { holdAfter: 4, hang: true } : {}));
      const registry = new ModelCatalog({ models: { 'anthropic:test-model': { price } } });
      return {
        model: new AnthropicModel({ model: 'test-model', env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: url }, registry }),
        expectedCost: costOf(usage),
      };
    },
  },
];

const someUsage: Usage = { inputTokens: 120, outputTokens: 40, cacheReadTokens: 30, cacheWriteTokens: 0 };
const withCalls: Solution = {
  calls: [
    { _tool: 'synth', sound: 'piano' },
    { _tool: 'mix', tracks: ['piano'] },
  ],
  output: null,
};

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    requestName: 'composer',
    step: 0,
    messages: [
      { role: 'system', content: 'Compose.' },
      { role: 'user', content: 'A ballad.' },
    ],
    schema: solutionSchema,
    config: {},
    ...extra,
  };
}

describe.each(harnesses)('Model contract: $name', (harness) => {
  it('answers a plain solution as text and parsed solution', async () => {
    const solution: Solution = { calls: [], output: 'hello' };
    const { model } = await harness.start({ solution, usage: someUsage });
    const response = await model.generate(request());
    expect(response.solution).toEqual(solution);
    expect(JSON.parse(response.text)).toEqual(solution);
    expect(response.model.startsWith(harness.prefix)).toBe(true);
    expect(model.id.startsWith(harness.prefix)).toBe(true);
  });

  it('delivers each call to onCall once, in order, before the answer resolves', async () => {
    const { model } = await harness.start({ solution: withCalls, usage: someUsage });
    const seen: Array<[Call, number]> = [];
    let resolved = false;
    const response = await model.generate(
      request({
        onCall: (call, index) => {
          expect(resolved).toBe(false);
          seen.push([call, index]);
        },
      }),
    );
    resolved = true;
    expect(seen).toEqual(withCalls.calls.map((call, index) => [call, index]));
    expect(response.solution).toEqual(withCalls);
  });

  it('reports normalised usage and its cost', async () => {
    const { model, expectedCost } = await harness.start({ solution: { calls: [], output: 1 }, usage: someUsage });
    const response = await model.generate(request());
    expect(response.usage).toEqual(someUsage);
    expect(response.costUsd).toBeCloseTo(expectedCost ?? Number.NaN, 12);
  });

  it('rejects with an AbortError when the signal is already aborted', async () => {
    const { model } = await harness.start({ solution: withCalls, usage: someUsage });
    const controller = new AbortController();
    controller.abort();
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects promptly with an AbortError when aborted mid-answer', async () => {
    const { model } = await harness.start({ solution: withCalls, usage: someUsage, hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
