/** Tests of the model registry (models.json, merging, prices, tiers) and of the provider registry by prefix. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/protocol/errors.js';
import { ModelConfigError } from '../../src/models/config-error.js';
import type { Model } from '../../src/protocol/model.js';
import { zeroUsage } from '../../src/protocol/usage.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { RecordingModel } from '../../src/models/recording.js';
import { builtinModelsPath, ModelCatalog, MODELS_FILE_ENV, readModelsFile } from '../../src/models/model-catalog.js';
import { ModelProviders } from '../../src/models/model-providers.js';
import { ReplayModel } from '../../src/models/replay.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 2_000_000, cacheWriteTokens: 0 };

describe('ModelCatalog', () => {
  it('ships a valid models.json with every tier for both providers', () => {
    const file = readModelsFile(builtinModelsPath());
    const registry = new ModelCatalog(file);
    for (const tier of ['fast', 'balanced', 'deep'] as const) {
      expect(registry.modelForTier(tier, { provider: 'openai' })).toMatch(/^openai:/);
      expect(registry.modelForTier(tier, { provider: 'anthropic' })).toMatch(/^anthropic:/);
    }
    expect(registry.get('openai:gpt-4.1-mini')).toEqual({
      tier: 'fast',
      can_delegate: false,
      maxOutputTokens: 32_768,
    });
    expect(registry.canDelegate('anthropic:claude-sonnet-4-6')).toBe(true);
    expect(registry.canDelegate('anthropic:claude-haiku-4-5')).toBe(false);
  });

  it('computes cost per million tokens, finds dated model names, and is free for replay', () => {
    const registry = ModelCatalog.load({ env: {} });
    expect(registry.costOf('openai:gpt-4.1-mini', usage)).toBeCloseTo(0.4 + 0.16 + 0.2, 10);
    expect(registry.costOf('openai:gpt-4.1-mini-2025-04-14', usage)).toBeCloseTo(0.76, 10);
    expect(registry.costOf('replay:x.json', usage)).toBe(0);
  });

  it('reports an unknown price as null and warns once per model', () => {
    const warnings: string[] = [];
    const registry = new ModelCatalog({ models: {} }, { warn: (message) => warnings.push(message) });
    expect(registry.costOf('openai:llama3.2', zeroUsage())).toBeNull();
    expect(registry.costOf('openai:llama3.2', zeroUsage())).toBeNull();
    expect(registry.costOf('openai:qwen', zeroUsage())).toBeNull();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('openai:llama3.2');
  });

  it('merges a user file on top: fields replaced, prices merged, models added, null removes', async () => {
    const user = join(dir, 'models.json');
    await writeFile(
      user,
      JSON.stringify({
        models: {
          'openai:gpt-4.1-mini': { price: { input: 1 } },
          'openai:llama3.2': { tier: 'fast', price: { input: 0, output: 0 } },
          'anthropic:claude-haiku-4-5': null,
        },
        tiers: { fast: ['openai:llama3.2'] },
      }),
    );
    const registry = ModelCatalog.load({ env: { [MODELS_FILE_ENV]: user } });
    // An override wins field by field over the maintained source's price (MODEL-18).
    expect(registry.get('openai:gpt-4.1-mini')?.price).toEqual({ input: 1 });
    expect(registry.priceOf('openai:gpt-4.1-mini')).toMatchObject({ price: { input: 1, output: 1.6, cacheRead: 0.1, cacheWrite: 1 }, source: 'models.json' });
    expect(registry.get('anthropic:claude-haiku-4-5')).toBeUndefined();
    // A removed model is unknown to the catalog in force, its source price too (MODEL-9).
    expect(registry.priceOf('anthropic:claude-haiku-4-5')).toBeUndefined();
    expect(registry.costOf('anthropic:claude-haiku-4-5', usage)).toBeNull();
    expect(registry.modelForTier('fast')).toBe('openai:llama3.2');
    expect(registry.modelForTier('fast', { provider: 'anthropic' })).toMatch(/^anthropic:/);
    expect(registry.modelForTier('fast', { filter: (model) => model.startsWith('nobody:') })).toBeNull();
    expect(registry.costOf('openai:llama3.2', usage)).toBe(0);
  });

  it("knows each model's output limit and temperature range, its provider's range by default (MODEL-13)", () => {
    const registry = ModelCatalog.load({ env: {} });
    expect(registry.limitsOf('openai:gpt-4.1')).toEqual({ maxOutputTokens: 32_768, temperature: { min: 0, max: 2 } });
    expect(registry.limitsOf('openai:gpt-4.1-mini-2025-04-14')).toEqual({ maxOutputTokens: 32_768, temperature: { min: 0, max: 2 } });
    expect(registry.limitsOf('openai:gpt-4o')?.maxOutputTokens).toBe(16_384);
    expect(registry.limitsOf('openai:gpt-5')).toEqual({ maxOutputTokens: 128_000, temperature: { min: 1, max: 1 } });
    expect(registry.limitsOf('anthropic:claude-sonnet-4-5')).toEqual({ maxOutputTokens: 64_000, temperature: { min: 0, max: 1 } });
    expect(registry.limitsOf('anthropic:claude-haiku-4-5')?.maxOutputTokens).toBe(64_000);
    expect(registry.limitsOf('anthropic:claude-opus-4-1')?.maxOutputTokens).toBe(32_000);
    // A model the catalog does not list (a local server's) is not checked.
    expect(registry.limitsOf('openai:llama3.2')).toBeUndefined();
    expect(registry.configProblems({ temperature: 9, maxTokens: 10_000_000 }, 'openai:llama3.2')).toEqual([]);
  });

  it("says which config values are beyond a model's limits, with their JSON pointers (MODEL-13)", () => {
    const registry = ModelCatalog.load({ env: {} });
    expect(registry.configProblems({ temperature: 3, maxTokens: 200_000 }, 'openai:gpt-4.1')).toEqual([
      { pointer: '/config/temperature', message: "3 is above openai:gpt-4.1's maximum temperature 2." },
      { pointer: '/config/maxTokens', message: "200000 is above openai:gpt-4.1's output limit of 32768 tokens." },
    ]);
    expect(registry.configProblems({ temperature: 1.5 }, 'anthropic:claude-haiku-4-5')).toEqual([
      { pointer: '/config/temperature', message: "1.5 is above anthropic:claude-haiku-4-5's maximum temperature 1." },
    ]);
    expect(registry.configProblems({ temperature: 0.2 }, 'openai:o3')[0]?.message).toBe(
      '0.2 is not a temperature openai:o3 accepts: it takes only 1 (leave temperature out).',
    );
    expect(registry.configProblems({ temperature: 2, maxTokens: 32_768 }, 'openai:gpt-4.1')).toEqual([]);
    expect(registry.configProblems({ temperature: 0, maxTokens: 64_000 }, 'anthropic:claude-sonnet-4-5')).toEqual([]);
    expect(registry.configProblems(undefined, 'openai:gpt-4.1')).toEqual([]);
  });

  it('merges limits from a user file: a model its own, a provider its default (MODEL-13)', async () => {
    const user = join(dir, 'models.json');
    await writeFile(
      user,
      JSON.stringify({
        providers: { openai: { temperature: { min: 0, max: 1.5 } }, local: { maxOutputTokens: 4096 } },
        models: { 'openai:gpt-4.1': { maxOutputTokens: 1000 }, 'local:tiny': { tier: 'fast' } },
      }),
    );
    const registry = ModelCatalog.load({ env: { [MODELS_FILE_ENV]: user } });
    expect(registry.limitsOf('openai:gpt-4.1')).toEqual({ maxOutputTokens: 1000, temperature: { min: 0, max: 1.5 } });
    expect(registry.priceOf('openai:gpt-4.1')?.price.input).toBe(2);
    expect(registry.limitsOf('local:tiny')).toEqual({ maxOutputTokens: 4096 });
    expect(registry.limitsOf('anthropic:claude-haiku-4-5')?.temperature).toEqual({ min: 0, max: 1 });
  });

  it('names the file and the JSON pointer of each problem in a bad models file', async () => {
    const user = join(dir, 'bad.json');
    await writeFile(user, JSON.stringify({ models: { 'openai:x': { tier: 'fastest', price: { input: -1, output: 1 } }, noprefix: {} } }));
    const error = (() => {
      try {
        ModelCatalog.load({ userFile: user });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ModelConfigError);
    const pointers = (error as ModelConfigError).problems.map((problem) => problem.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/models/openai:x/tier', '/models/openai:x/price/input']));
    expect((error as Error).message).toContain(user);
  });
});

describe('ModelProviders', () => {
  const registry = new ModelCatalog({ models: {} }, { warn: () => undefined });

  it('builds models by prefix: replay files relative to cwd, live providers from env', async () => {
    await writeFile(join(dir, 'run.cassette.json'), JSON.stringify({ version: 1, entries: [{ solution: { calls: [], output: 1 } }] }));
    const providers = new ModelProviders({ registry });
    const replay = providers.create('replay:run.cassette.json', { cwd: dir, env: {} });
    expect(replay).toBeInstanceOf(ReplayModel);
    expect(replay.id).toBe(`replay:${join(dir, 'run.cassette.json')}`);
    const openai = providers.create('openai:gpt-4.1-mini', { cwd: dir, env: { OPENAI_API_KEY: 'k' } });
    expect(openai).toBeInstanceOf(OpenAIModel);
    expect(openai.id).toBe('openai:gpt-4.1-mini');
    expect(providers.create('anthropic:claude-haiku-4-5', { cwd: dir, env: { ANTHROPIC_API_KEY: 'k' } }).id).toBe('anthropic:claude-haiku-4-5');
  });

  it('rejects an unknown prefix with the list of known ones', () => {
    const providers = new ModelProviders({ registry });
    expect(() => providers.create('gemini:pro', { cwd: dir, env: {} })).toThrow(UsageError);
    expect(() => providers.create('gemini:pro', { cwd: dir, env: {} })).toThrow(/replay:, openai:, anthropic:/);
    expect(() => providers.create('gpt-4.1', { cwd: dir, env: {} })).toThrow(/no provider prefix/);
  });

  it('accepts registered providers and wraps live models for --record with one recorder per file', async () => {
    const scripted: Model = {
      id: 'scripted:x',
      generate: async () => ({ text: '{"calls":[],"output":2}', solution: { calls: [], output: 2 }, model: 'scripted:x', usage: zeroUsage(), costUsd: null }),
    };
    const providers = new ModelProviders({ registry, builtins: false }).register('scripted:', () => scripted);
    expect(providers.prefixes()).toEqual(['scripted:']);
    const first = providers.create('scripted:x', { cwd: dir, env: {}, record: 'out.cassette.json' });
    const second = providers.create('scripted:y', { cwd: dir, env: {}, record: 'out.cassette.json' });
    expect(first).toBeInstanceOf(RecordingModel);
    const request = { requestName: 'r', step: 0, messages: [], schema: {}, config: {} };
    await first.generate(request);
    await second.generate({ ...request, requestName: 'child' });
    const cassette = JSON.parse(await readFile(join(dir, 'out.cassette.json'), 'utf8')) as { entries: unknown[] };
    expect(cassette.entries).toHaveLength(2);
  });
});
