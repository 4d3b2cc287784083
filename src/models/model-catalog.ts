/** The model catalog: which models exist, their tier, whether they may delegate, their limits (models.json plus DELEGATE_MODELS) and their prices (the maintained source, overridden by models.json). */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestConfig } from '../protocol/types.js';
import type { Usage } from '../protocol/usage.js';
import { ModelConfigError } from './config-error.js';
import { readDocumentFileSync } from '../files/read-document-file.js';
import { type SourcePrice, priceSourceName, sourceCostOf, sourcePriceOf } from './price-source.js';

/** The tiers a Request or a delegate call may ask for (DEL-16; the model catalog, `config.tier`). */
export type Tier = 'fast' | 'balanced' | 'deep';

/** Every tier, cheapest first. */
export const TIERS: readonly Tier[] = ['fast', 'balanced', 'deep'];

/** Prices in US dollars per million tokens. */
export interface ModelPrice {
  /** Uncached input tokens. */
  input: number;
  output: number;
  /** Cached input tokens read; the input price when absent. */
  cacheRead?: number;
  /** Input tokens written to the cache; the input price when absent. */
  cacheWrite?: number;
}

/** The temperatures a model accepts, both ends included (MODEL-13). */
export interface TemperatureRange {
  min: number;
  max: number;
}

/** What a model accepts of a Request's configuration (MODEL-13); kept apart from its price. */
export interface ModelLimits {
  /** The most output tokens one answer may ask for (`config.maxTokens`). */
  maxOutputTokens?: number;
  /** The range of `config.temperature`. */
  temperature?: TemperatureRange;
}

/** What the registry knows about one model. */
export interface ModelEntry extends ModelLimits {
  tier?: Tier;
  /** Whether the builtin `delegate` tool is offered while this model runs. */
  can_delegate?: boolean;
  /** A price that overrides the maintained source's, field by field (MODEL-18). */
  price?: Partial<ModelPrice>;
  /** The context window in tokens, for a model whose source states none or states it wrongly. */
  contextWindow?: number;
}

/** The source of prices in the catalog's `models.json` files: a price there overrides the maintained source's (MODEL-18). */
export const OVERRIDE_SOURCE = 'models.json';

/** A model's price and where it comes from (MODEL-18). */
export interface PricedModel extends SourcePrice {
  /** `genai-prices <version>` for the maintained source, `models.json` for an override. */
  source: string;
}

/** The provider of a spec (`openai` of `openai:gpt-5`), if it has one. */
export function providerOf(spec: string | null | undefined): string | undefined {
  const colon = spec?.indexOf(':') ?? -1;
  return colon > 0 ? (spec as string).slice(0, colon) : undefined;
}

/** A model spec as the price source names it: `openai:gpt-4.1` is model `gpt-4.1` of provider `openai`. */
function sourceNameOf(spec: string): { provider: string; model: string } | undefined {
  const provider = providerOf(spec);
  return provider === undefined ? undefined : { provider, model: spec.slice(provider.length + 1) };
}

/** The shape of a models.json file. `null` removes a model inherited from an earlier file. */
export interface ModelsFile {
  models?: Record<string, ModelEntry | null>;
  /** Limits per provider (`openai`), for its models in the catalog that state none (MODEL-13). */
  providers?: Record<string, ModelLimits>;
  /** Addition: preferred models per tier, tried before the file order. */
  tiers?: Partial<Record<Tier, string[]>>;
}

/** The environment variable naming a user models.json merged on top of the shipped one. */
export const MODELS_FILE_ENV = 'DELEGATE_MODELS';

/** The models.json shipped with the package (at the package root). */
export function builtinModelsPath(): string {
  return fileURLToPath(new URL('../../models.json', import.meta.url));
}

/** Options of the model registry. */
export interface ModelCatalogOptions {
  /** Receives warnings (an unknown price, once per model); writes to stderr by default. */
  warn?: (message: string) => void;
}

/** Options of `ModelCatalog.load`. */
export interface LoadModelCatalogOptions extends ModelCatalogOptions {
  /** The base file; the shipped models.json by default. */
  builtinFile?: string;
  /** A user file merged on top; default: the file named by DELEGATE_MODELS, if any. */
  userFile?: string;
  /** Environment consulted for DELEGATE_MODELS; `process.env` by default. */
  env?: Record<string, string | undefined>;
  /** Folder a relative user file resolves against; the process's cwd by default. */
  cwd?: string;
}

const defaultWarn = (message: string): void => {
  process.stderr.write(`warning: ${message}\n`);
};

/**
 * Models with their tier, delegation flag and prices. Files merge on top of each other: a model's
 * fields are replaced field by field (`price` too), new models are appended, `null` removes one.
 */
export class ModelCatalog {
  private readonly models = new Map<string, ModelEntry>();
  /** Models a file removed with `null`: the catalog in force knows nothing of them, their price included (MODEL-9). */
  private readonly removed = new Set<string>();
  private readonly tiers: Partial<Record<Tier, string[]>> = {};
  private readonly providerLimits = new Map<string, ModelLimits>();
  private readonly warn: (message: string) => void;
  private readonly warned = new Set<string>();

  constructor(file: ModelsFile = {}, options: ModelCatalogOptions = {}) {
    this.warn = options.warn ?? defaultWarn;
    this.merge(file);
  }

  /** Loads the shipped models.json, then the user file (explicit, or from DELEGATE_MODELS) on top. */
  static load(options: LoadModelCatalogOptions = {}): ModelCatalog {
    const registry = new ModelCatalog({}, options);
    registry.merge(readModelsFile(options.builtinFile ?? builtinModelsPath()));
    const user = options.userFile ?? (options.env ?? process.env)[MODELS_FILE_ENV];
    if (user) registry.merge(readModelsFile(resolve(options.cwd ?? process.cwd(), user)));
    return registry;
  }

  /** Merges a models file on top of what the registry holds (see the class comment). */
  merge(file: ModelsFile): this {
    for (const [model, entry] of Object.entries(file.models ?? {})) {
      if (entry === null) {
        this.models.delete(model);
        this.removed.add(model);
        continue;
      }
      this.removed.delete(model);
      const previous = this.models.get(model) ?? {};
      const merged: ModelEntry = { ...previous, ...entry };
      if (previous.price || entry.price) merged.price = { ...previous.price, ...entry.price };
      this.models.set(model, merged);
    }
    for (const [provider, limits] of Object.entries(file.providers ?? {})) {
      this.providerLimits.set(provider, { ...this.providerLimits.get(provider), ...limits });
    }
    for (const [tier, models] of Object.entries(file.tiers ?? {}) as Array<[Tier, string[]]>) {
      this.tiers[tier] = [...models];
    }
    return this;
  }

  /** Every model spec the registry knows, in order. */
  list(): string[] {
    return [...this.models.keys()];
  }

  /** The entry of a model (also found without a trailing date, `gpt-4.1-mini-2025-04-14` → `gpt-4.1-mini`). */
  get(model: string): ModelEntry | undefined {
    return this.models.get(model) ?? this.models.get(model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, ''));
  }

  /** Whether the model may delegate (`can_delegate`); unknown models may not. */
  canDelegate(model: string): boolean {
    return this.get(model)?.can_delegate === true;
  }

  /** The tiers that have a model (in the file, or in a tier's preference list), cheapest first. */
  tierNames(): Tier[] {
    return TIERS.filter((tier) => (this.tiers[tier]?.length ?? 0) > 0 || [...this.models.values()].some((entry) => entry.tier === tier));
  }

  /** The model's tier, when known. */
  tierOf(model: string): Tier | undefined {
    return this.get(model)?.tier;
  }

  /**
   * What a model accepts (MODEL-13): its own limits over its provider's. Undefined for a model the
   * catalog does not list, which is not checked: an OpenAI-compatible server's model may accept
   * anything.
   */
  limitsOf(model: string): ModelLimits | undefined {
    const entry = this.get(model);
    if (!entry) return undefined;
    const provider = this.providerLimits.get(providerOf(model) ?? '') ?? {};
    const own: ModelLimits = {
      ...(entry.maxOutputTokens === undefined ? {} : { maxOutputTokens: entry.maxOutputTokens }),
      ...(entry.temperature === undefined ? {} : { temperature: entry.temperature }),
    };
    return { ...provider, ...own };
  }

  /**
   * The problems of a Request's `config` on `model` (MODEL-13): a `temperature` outside the model's
   * range, a `maxTokens` above its output limit; each with its JSON pointer. None for a model the
   * catalog does not list.
   */
  configProblems(config: RequestConfig | undefined, model: string): Array<{ pointer: string; message: string }> {
    const limits = this.limitsOf(model);
    if (!limits || !config) return [];
    const problems: Array<{ pointer: string; message: string }> = [];
    const { temperature, maxTokens } = config;
    const range = limits.temperature;
    if (typeof temperature === 'number' && range) {
      if (range.min === range.max && temperature !== range.min) {
        problems.push({
          pointer: '/config/temperature',
          message: `${temperature} is not a temperature ${model} accepts: it takes only ${range.min} (leave temperature out).`,
        });
      } else if (temperature > range.max) {
        problems.push({ pointer: '/config/temperature', message: `${temperature} is above ${model}'s maximum temperature ${range.max}.` });
      } else if (temperature < range.min) {
        problems.push({ pointer: '/config/temperature', message: `${temperature} is below ${model}'s minimum temperature ${range.min}.` });
      }
    }
    if (typeof maxTokens === 'number' && limits.maxOutputTokens !== undefined && maxTokens > limits.maxOutputTokens) {
      problems.push({ pointer: '/config/maxTokens', message: `${maxTokens} is above ${model}'s output limit of ${limits.maxOutputTokens} tokens.` });
    }
    return problems;
  }

  /**
   * The price of a model (MODEL-18): the maintained source's, found by provider and model name, or
   * the one its `models.json` entry gives, which wins field by field and is reported as
   * `models.json` (a cached or cache-write price neither names is the input price). Undefined
   * when neither knows the model's input and output prices. Loads the source on first use.
   */
  priceOf(model: string): PricedModel | undefined {
    const override = this.get(model)?.price;
    const found = this.sourcePriceOf(model);
    if (!override) return found && { ...found, source: priceSourceName() };
    const merged: Partial<ModelPrice> = { ...found?.price, ...override };
    if (merged.input === undefined || merged.output === undefined) return undefined;
    const price: ModelPrice = {
      input: merged.input,
      output: merged.output,
      cacheRead: merged.cacheRead ?? merged.input,
      cacheWrite: merged.cacheWrite ?? merged.input,
    };
    const contextWindow = found?.contextWindow;
    return { price, ...(contextWindow === undefined ? {} : { contextWindow }), source: OVERRIDE_SOURCE };
  }

  /** The model's context window in tokens: its `models.json` entry's, else the maintained source's. */
  contextWindowOf(model: string): number | undefined {
    return this.get(model)?.contextWindow ?? this.sourcePriceOf(model)?.contextWindow;
  }

  /**
   * The cost in US dollars of `usage` on `model`, or `null` when its price is unknown (warned once
   * per model). Replay models cost nothing. A model priced by the maintained source is priced as it
   * says, cached tokens and long-context rates included; an override in `models.json` is priced at
   * its flat rates (MODEL-18).
   */
  costOf(model: string, usage: Usage): number | null {
    if (model.startsWith('replay:')) return 0;
    const named = sourceNameOf(model);
    if (!this.get(model)?.price && named && !this.removed.has(model)) {
      const cost = sourceCostOf(named.provider, named.model, usage);
      if (cost !== undefined) return cost;
    }
    const price = this.priceOf(model)?.price;
    if (!price) {
      if (!this.warned.has(model)) {
        this.warned.add(model);
        this.warn(
          `No price is known for model "${model}" (${priceSourceName()} has none and no models.json gives one), so its cost is reported as unknown. Add its price to a models.json file (${MODELS_FILE_ENV}) to price it.`,
        );
      }
      return null;
    }
    const dollars =
      usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      usage.cacheReadTokens * (price.cacheRead ?? price.input) +
      usage.cacheWriteTokens * (price.cacheWrite ?? price.input);
    return dollars / 1_000_000;
  }

  /** The maintained source's price of a model spec (`openai:gpt-4.1`), if it has a provider the source knows. */
  private sourcePriceOf(model: string): SourcePrice | undefined {
    if (this.removed.has(model)) return undefined;
    const named = sourceNameOf(model);
    return named && sourcePriceOf(named.provider, named.model);
  }

  /**
   * The default model of a tier: the tier's preference list (`tiers`) first, then the registry's
   * order. `provider` (e.g. `openai`) prefers that provider's models; `filter` excludes models
   * (e.g. providers without credentials). `null` when no model fits.
   */
  modelForTier(tier: Tier, options: { provider?: string; filter?: (model: string) => boolean } = {}): string | null {
    const candidates = [...(this.tiers[tier] ?? []), ...[...this.models].filter(([, entry]) => entry.tier === tier).map(([model]) => model)];
    const allowed = candidates.filter((model) => options.filter?.(model) ?? true);
    if (options.provider) {
      const prefix = `${options.provider.replace(/:$/, '')}:`;
      const own = allowed.find((model) => model.startsWith(prefix));
      if (own) return own;
    }
    return allowed[0] ?? null;
  }
}

/** Reads and validates a models.json file; problems name the file and the JSON pointer. */
export function readModelsFile(path: string): ModelsFile {
  const reading = readDocumentFileSync<ModelsFile>(path, 'models.schema.json');
  if (!reading.ok) throw new ModelConfigError('models file', reading.problems);
  return reading.value;
}

/** The catalog's first name, still exported by the package: the same class as ModelCatalog. */
export const ModelRegistry = ModelCatalog;
/** The catalog's first name: the same type as ModelCatalog. */
export type ModelRegistry = ModelCatalog;
