/** Tests of `delegate-run models` (src/cli/models.ts, spec/cli.md CLI-32): the catalog's models with tier, context window, price and the price's source. */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import type { ModelRow } from '../../src/cli/models.js';
import { main } from '../../src/cli/run.js';
import { builtinModelsPath, readModelsFile } from '../../src/models/model-catalog.js';
import { tempDir } from '../helpers/cli.js';
import { fakePipe } from './fake-terminal.js';

async function models(args: string[], env: Record<string, string | undefined> = {}, cwd = resolve('.')) {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await main(['models', ...args], { stdout, stderr, env, cwd });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

async function jsonModels(args: string[] = [], env: Record<string, string | undefined> = {}): Promise<ModelRow[]> {
  const { status, stdout, stderr } = await models(['--json', ...args], env);
  expect([status, stderr]).toEqual([0, '']);
  expect(stdout.trim().split('\n')).toHaveLength(1);
  return (JSON.parse(stdout) as { models: ModelRow[] }).models;
}

/** The source's own per-million prices of a model, as genai-prices states them. */
function genaiPrices(spec: string): Record<string, unknown> {
  const [provider, model] = spec.split(':') as [string, string];
  const priced = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, { providerId: provider });
  if (!priced) throw new Error(`genai-prices does not price ${spec}`);
  return priced.model_price;
}

const shipped = Object.keys(readModelsFile(builtinModelsPath()).models ?? {});

describe('delegate-run models', () => {
  it('lists every model of the shipped catalog, priced by genai-prices as genai-prices states the price', async () => {
    const rows = await jsonModels();
    expect(rows.map((row) => row.model)).toEqual(shipped);
    for (const row of rows) {
      const own = genaiPrices(row.model);
      expect(row.source).toMatch(/^genai-prices \d+\.\d+\.\d+$/);
      const base = (key: string) => {
        const value = own[key];
        return typeof value === 'object' && value !== null ? (value as { base: number }).base : value;
      };
      expect(row.price).toEqual({
        input: base('input_mtok'),
        output: base('output_mtok'),
        cacheRead: base('cache_read_mtok') ?? base('input_mtok'),
        cacheWrite: base('cache_write_mtok') ?? base('input_mtok'),
      });
      expect(row.contextWindow).toBeGreaterThan(0);
    }
    const haiku = rows.find((row) => row.model === 'anthropic:claude-haiku-4-5');
    expect(haiku).toMatchObject({ tier: 'fast', can_delegate: false, longContext: null });
    const sonnet = rows.find((row) => row.model === 'anthropic:claude-sonnet-4-5');
    const tiered = genaiPrices('anthropic:claude-sonnet-4-5').input_mtok as { tiers: Array<{ start: number; price: number }> };
    expect(sonnet?.longContext).toMatchObject({ aboveInputTokens: tiered.tiers[0]?.start, price: { input: tiered.tiers[0]?.price } });
  });

  it('prints a table: one row per model, a long-context price on a row of its own, where each price comes from', async () => {
    const { status, stdout, stderr } = await models([]);
    expect([status, stderr]).toEqual([0, '']);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Prices in US dollars per million tokens.');
    expect(lines[1]).toMatch(/^model +tier +delegates +context +input +output +cached +cache write +source$/);
    expect(stdout).toMatch(/\nopenai:gpt-4\.1-mini +fast +no +[\d,]+ +\d+\.\d\d+ +\d+\.\d\d+ +\d+\.\d\d+ +\d+\.\d\d+ +genai-prices \d+\.\d+\.\d+\n/);
    expect(stdout).toMatch(/\nanthropic:claude-sonnet-4-5 +balanced +yes .*\n {2}above 200,000 input tokens +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+\n/);
    expect(lines).toHaveLength(2 + shipped.length + 1);
  });

  it('shows a models.json price as overriding the source, and a model without a price as unknown', async () => {
    const dir = tempDir('models-');
    writeFileSync(
      join(dir, 'mine.json'),
      JSON.stringify({ models: { 'openai:gpt-4.1': { price: { input: 1, output: 4 } }, 'local:tiny': { tier: 'fast', contextWindow: 8192 } } }),
    );
    const rows = await jsonModels(['--models', join(dir, 'mine.json')]);
    expect(rows.find((row) => row.model === 'openai:gpt-4.1')).toMatchObject({
      price: { input: 1, output: 4, cacheRead: 0.5, cacheWrite: 1 },
      source: 'models.json',
    });
    expect(rows.at(-1)).toEqual({ model: 'local:tiny', tier: 'fast', can_delegate: false, contextWindow: 8192, price: null, longContext: null, source: null });
    // DELEGATE_MODELS is read the same way when --models is not given.
    expect(await jsonModels([], { DELEGATE_MODELS: join(dir, 'mine.json') })).toEqual(rows);
    const text = await models(['--models', join(dir, 'mine.json')]);
    expect(text.stdout).toMatch(/\nlocal:tiny +fast +no +8,192 +\? +\? +\? +\? +unknown: its cost is unknown\n/);
  });

  it('refuses bad usage with exit 2: an unknown option named with the nearest, a file, an invalid models file', async () => {
    const unknown = await models(['--jsn']);
    expect([unknown.status, unknown.stdout, unknown.stderr]).toEqual([2, '', 'delegate-run models: unknown option --jsn; did you mean --json?\n']);
    const positional = await models(['models.json']);
    expect([positional.status, positional.stdout]).toEqual([2, '']);
    expect(positional.stderr).toContain('takes no file, got: models.json');
    const invalid = await models(['--models', 'package.json']);
    expect([invalid.status, invalid.stdout]).toEqual([2, '']);
    expect(invalid.stderr).toContain(`${resolve('package.json')}#`);
    const help = await models(['-h']);
    expect([help.status, help.stdout.split('\n')[0]]).toEqual([0, 'Usage: delegate-run models [options]']);
    const stdout = fakePipe();
    const stderr = fakePipe();
    expect(await main(['modles'], { stdout, stderr, env: {}, cwd: resolve('.') })).toBe(2);
    expect(stderr.text()).toBe('delegate-run: unknown subcommand modles; did you mean models?\n');
  });
});
