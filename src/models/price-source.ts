/** The maintained price source (MODEL-18): model prices from the @pydantic/genai-prices package, loaded the first time a price is asked for, never fetched from the network. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as GenaiPrices from '@pydantic/genai-prices';
import type { Usage } from '../protocol/usage.js';
import type { ModelPrice } from './model-catalog.js';

/** The package's npm name. */
const PACKAGE = '@pydantic/genai-prices';

/** A model's price as the source states it, in US dollars per million tokens. */
export interface SourcePrice {
  /** The price up to the long-context threshold (all of it when there is none). */
  price: ModelPrice;
  /** The price once a call's input (cached tokens included) passes `aboveInputTokens`. */
  longContext?: { aboveInputTokens: number; price: ModelPrice };
  /** The model's context window in tokens, when the source states it. */
  contextWindow?: number;
}

interface LoadedSource {
  prices: typeof GenaiPrices;
  version: string;
}

let loaded: LoadedSource | undefined;

/**
 * Loads the package once, synchronously, the first time a price is asked for, so that a run that
 * prices nothing never loads its 800 kB of data (MODEL-18). `require` of its CommonJS build rather
 * than `import()` keeps `ModelCatalog.costOf` synchronous for its many callers. Only `calcPrice`
 * and `findProvider` are used, on the data bundled with the package: its `updatePrices` (the only
 * path that fetches newer data) is never called, so no price is read from the network.
 */
function source(): LoadedSource {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const entry = require.resolve(PACKAGE);
  const prices = require(entry) as typeof GenaiPrices;
  const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version?: unknown };
  loaded = { prices, version: String(manifest.version) };
  return loaded;
}

/** Whether the package has been loaded in this process (a run that prices nothing leaves it unloaded, MODEL-18). */
export function priceSourceLoaded(): boolean {
  return loaded !== undefined;
}

/** The source's name as `delegate-run models` and warnings show it: `genai-prices 0.1.8`. */
export function priceSourceName(): string {
  return `genai-prices ${source().version}`;
}

/**
 * The source's entry for `model` of `provider` (`openai`, `gpt-4.1-mini`), or undefined when it
 * has none. Only a provider the source names exactly is looked up, so a provider of one's own is
 * never priced as a namesake of the source's.
 */
function lookUp(provider: string, model: string, usage: GenaiPrices.Usage): GenaiPrices.PriceCalculation | undefined {
  const { prices } = source();
  if (prices.findProvider({ providerId: provider })?.id !== provider) return undefined;
  return prices.calcPrice(usage, model, { providerId: provider }) ?? undefined;
}

/** The source's price of a model, or undefined when the source does not know it. */
export function sourcePriceOf(provider: string, model: string): SourcePrice | undefined {
  const found = lookUp(provider, model, { input_tokens: 0, output_tokens: 0 });
  if (!found) return undefined;
  const base: Partial<ModelPrice> = {};
  const above: Partial<ModelPrice> = {};
  let threshold: number | undefined;
  for (const [ours, theirs] of PRICE_KEYS) {
    const value = found.model_price[theirs];
    if (typeof value === 'number') {
      base[ours] = value;
      above[ours] = value;
    } else if (value !== undefined) {
      base[ours] = value.base;
      const tier = value.tiers[0];
      above[ours] = tier?.price ?? value.base;
      if (tier) threshold = Math.min(threshold ?? tier.start, tier.start);
    }
  }
  if (base.input === undefined || base.output === undefined) return undefined;
  return {
    price: base as ModelPrice,
    ...(threshold === undefined ? {} : { longContext: { aboveInputTokens: threshold, price: above as ModelPrice } }),
    ...(found.model.context_window === undefined ? {} : { contextWindow: found.model.context_window }),
  };
}

/**
 * What `usage` on the model costs in US dollars as the source prices it, or undefined when the
 * source does not know the model. Cached reads and cache writes are priced at their own rates where
 * the source has them (else as input), and the long-context rate applies to the whole call once its
 * input, cached tokens included, passes the threshold, as the provider bills it.
 */
export function sourceCostOf(provider: string, model: string, usage: Usage): number | undefined {
  const found = lookUp(provider, model, {
    // The source's input_tokens is the whole input, of which cache reads and writes are parts.
    input_tokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    output_tokens: usage.outputTokens,
  });
  return found?.total_price;
}

/** Our price fields and the source's keys for them. */
const PRICE_KEYS: ReadonlyArray<[keyof ModelPrice, string]> = [
  ['input', 'input_mtok'],
  ['output', 'output_mtok'],
  ['cacheRead', 'cache_read_mtok'],
  ['cacheWrite', 'cache_write_mtok'],
];
