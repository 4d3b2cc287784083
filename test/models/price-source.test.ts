/** Tests of the maintained price source (src/models/price-source.ts, spec/models.md MODEL-18): prices from @pydantic/genai-prices, overrides from models.json, cached and long-context rates, loaded only when a cost is computed, never from the network. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/run.js';
import { ModelCatalog, MODELS_FILE_ENV } from '../../src/models/model-catalog.js';
import { priceSourceLoaded } from '../../src/models/price-source.js';
import type { Usage } from '../../src/protocol/usage.js';
import { readTrace, tempDir } from '../helpers/cli.js';
import { fakePipe } from '../cli/fake-terminal.js';

/** What genai-prices itself charges for `usage` on a model: its figure, to compare ours with. */
function genaiFigure(spec: string, usage: Usage): number {
  const [provider, model] = spec.split(':') as [string, string];
  const priced = calcPrice(
    {
      input_tokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
      cache_read_tokens: usage.cacheReadTokens,
      cache_write_tokens: usage.cacheWriteTokens,
      output_tokens: usage.outputTokens,
    },
    model,
    { providerId: provider },
  );
  if (!priced) throw new Error(`genai-prices does not price ${spec}`);
  return priced.total_price;
}

function usage(fields: Partial<Usage>): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, ...fields };
}

function shippedCatalog(warnings: string[] = []): ModelCatalog {
  return ModelCatalog.load({ env: {}, warn: (message) => warnings.push(message) });
}

async function runCli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await main(args, { stdout, stderr, env: {}, cwd: resolve('.') });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the maintained price source (MODEL-18)', () => {
  // First in the file: nothing before it has priced anything in this module graph.
  it('is not loaded by a run that calls no model, nor by loading the catalog', async () => {
    shippedCatalog();
    const planned = await runCli(['requests/plan/welcome.json', '--input', '{"name":"Ada"}', '--json', '--quiet']);
    expect(planned.status, planned.stderr).toBe(0);
    expect(JSON.parse(planned.stdout).usage.costUsd).toBe(0);
    expect(priceSourceLoaded()).toBe(false);
  });

  it("prices a replayed run's answers as genai-prices prices the models their entries name, without the network", async () => {
    const fetch = vi.fn(() => {
      throw new Error('no network');
    });
    vi.stubGlobal('fetch', fetch);
    const trace = join(tempDir('price-source-'), 'trace.jsonl');
    const run = await runCli(['requests/tiers/planner.json', '--trace', trace, '--json', '--quiet']);
    expect(run.status, run.stderr).toBe(0);
    expect(priceSourceLoaded()).toBe(true);
    const answers = readTrace(trace).filter((event) => event.event === 'model.response');
    expect(answers.length).toBeGreaterThan(1);
    let total = 0;
    for (const answer of answers) {
      const figure = genaiFigure(answer.replayOf as string, answer.usage as Usage);
      expect(answer.costUsd).toBeCloseTo(figure, 15);
      total += figure;
    }
    expect(total).toBeGreaterThan(0);
    expect(JSON.parse(run.stdout).usage.costUsd).toBeCloseTo(total, 12);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('never takes the package’s update path, the only one that reads prices from the network', () => {
    const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const callers = files.filter((file) => /\b(updatePrices|waitForUpdate)\s*\(|REMOTE_DATA_JSON_URL/.test(readFileSync(join('src', file), 'utf8')));
    expect(callers).toEqual([]);
  });

  it('prices cached input below uncached input, and cache writes at their own rate, as the source says', () => {
    const catalog = shippedCatalog();
    const haiku = 'anthropic:claude-haiku-4-5';
    const uncached = catalog.costOf(haiku, usage({ inputTokens: 1_000_000 })) as number;
    const cached = catalog.costOf(haiku, usage({ cacheReadTokens: 1_000_000 })) as number;
    const written = catalog.costOf(haiku, usage({ cacheWriteTokens: 1_000_000 })) as number;
    expect(cached).toBeLessThan(uncached);
    expect(written).toBeGreaterThan(uncached);
    for (const [cost, fields] of [
      [uncached, { inputTokens: 1_000_000 }],
      [cached, { cacheReadTokens: 1_000_000 }],
      [written, { cacheWriteTokens: 1_000_000 }],
    ] as const) {
      expect(cost).toBeCloseTo(genaiFigure(haiku, usage(fields)), 15);
    }
    // OpenAI states no cache-write rate: written input is billed as input.
    const mini = 'openai:gpt-4.1-mini';
    const mixed = usage({ inputTokens: 1000, cacheReadTokens: 3000, cacheWriteTokens: 500, outputTokens: 200 });
    expect(catalog.costOf(mini, mixed)).toBeCloseTo(genaiFigure(mini, mixed), 15);
    expect(catalog.costOf(mini, usage({ cacheWriteTokens: 1000 }))).toBeCloseTo(catalog.costOf(mini, usage({ inputTokens: 1000 })) as number, 15);
  });

  it('prices a call past a long-context threshold at the long-context rates, its cached input counted in the threshold', () => {
    const catalog = shippedCatalog();
    const sonnet = 'anthropic:claude-sonnet-4-5';
    const longContext = catalog.priceOf(sonnet)?.longContext;
    expect(longContext?.aboveInputTokens).toBeGreaterThan(0);
    const threshold = longContext?.aboveInputTokens as number;
    const base = catalog.priceOf(sonnet)?.price as { input: number; output: number; cacheRead: number };
    const above = longContext?.price as { input: number; output: number; cacheRead: number };
    expect(above.input).toBeGreaterThan(base.input);
    // Uncached input alone stays below the threshold; with the cached input the call passes it.
    const long = usage({ inputTokens: threshold - 10_000, cacheReadTokens: 20_000, outputTokens: 1000 });
    const short = usage({ inputTokens: threshold - 30_000, cacheReadTokens: 20_000, outputTokens: 1000 });
    expect(catalog.costOf(sonnet, long)).toBeCloseTo(genaiFigure(sonnet, long), 15);
    expect(catalog.costOf(sonnet, long)).toBeCloseTo(((threshold - 10_000) * above.input + 20_000 * above.cacheRead + 1000 * above.output) / 1e6, 12);
    expect(catalog.costOf(sonnet, short)).toBeCloseTo(((threshold - 30_000) * base.input + 20_000 * base.cacheRead + 1000 * base.output) / 1e6, 12);
  });

  it('lets a models.json price win over the source, field by field, and says so', () => {
    const dir = tempDir('price-source-');
    const user = join(dir, 'models.json');
    writeFileSync(
      user,
      JSON.stringify({ models: { 'anthropic:claude-haiku-4-5': { price: { input: 0.5, output: 2 } }, 'local:tiny': { price: { input: 0.1, output: 0.2 } } } }),
    );
    const catalog = ModelCatalog.load({ env: { [MODELS_FILE_ENV]: user } });
    const source = shippedCatalog().priceOf('anthropic:claude-haiku-4-5');
    expect(source?.source).toMatch(/^genai-prices \d+\.\d+\.\d+$/);
    expect(catalog.priceOf('anthropic:claude-haiku-4-5')).toEqual({
      price: { input: 0.5, output: 2, cacheRead: source?.price.cacheRead, cacheWrite: source?.price.cacheWrite },
      contextWindow: source?.contextWindow,
      source: 'models.json',
    });
    const call = usage({ inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 });
    expect(catalog.costOf('anthropic:claude-haiku-4-5', call)).toBeCloseTo(0.5 + 2 + (source?.price.cacheRead as number), 12);
    // A model the source does not know: its own price alone, cached input at its input price.
    expect(catalog.priceOf('local:tiny')).toEqual({ price: { input: 0.1, output: 0.2, cacheRead: 0.1, cacheWrite: 0.1 }, source: 'models.json' });
    expect(catalog.costOf('local:tiny', call)).toBeCloseTo(0.4, 12);
  });

  it('states an unknown price as unknown (null, said once), never 0', () => {
    const warnings: string[] = [];
    const catalog = shippedCatalog(warnings);
    expect(catalog.priceOf('openai:my-own-model')).toBeUndefined();
    expect(catalog.costOf('openai:my-own-model', usage({ inputTokens: 10 }))).toBeNull();
    expect(catalog.costOf('openai:my-own-model', usage({ inputTokens: 10 }))).toBeNull();
    // A provider of one's own is not priced as a namesake of the source's models.
    expect(catalog.costOf('mine:gpt-4.1', usage({ inputTokens: 10 }))).toBeNull();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/No price is known for model "openai:my-own-model" \(genai-prices \S+ has none and no models\.json gives one\)/);
  });
});
