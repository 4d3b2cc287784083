/**
 * The one model-choice policy: which model the top run uses (CLI-3) and which a child run uses
 * (DEL-16). Both read the same document fields (`config.model`, `config.tier`) through the same
 * catalog, create models through the same providers, and create each spec once.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { DelegateError } from '../protocol/errors.js';
import type { Model, ModelFactoryOptions } from '../protocol/model.js';
import type { RequestDocument } from '../protocol/types.js';
import type { ModelProviders } from './model-providers.js';

/** The model of each provider the top run uses when only that provider's API key is set (CLI-3). */
export const DEFAULT_MODELS = { openai: 'openai:gpt-4.1-mini', anthropic: 'anthropic:claude-sonnet-4-6' } as const;

/** The providers tried, in order, when no `--model` is given: each with the variable holding its key. */
const KEYED_PROVIDERS = [
  { provider: 'openai', key: 'OPENAI_API_KEY' },
  { provider: 'anthropic', key: 'ANTHROPIC_API_KEY' },
] as const;

/** Why the top run got the model it got. */
export type TopModelSource = 'option' | 'api-key' | 'cassette' | 'none';

/** The top run's model, and where it came from. */
export interface TopModelChoice {
  model?: Model;
  source: TopModelSource;
  /** The spec the model was created from. */
  spec?: string;
}

/** A cassette beside a request file: `<name>.cassette.json` (CAS-11). */
export function siblingCassette(requestFile: string): string {
  return join(dirname(requestFile), `${basename(requestFile, extname(requestFile))}.cassette.json`);
}

/** True for a model that plays recorded answers: it plays every run's part (DEL-16). */
function replays(model: Model | undefined): boolean {
  return model?.id.startsWith('replay:') ?? false;
}

/** Model choice over one set of providers and factory options; each spec is created once. */
export class ModelChooser {
  private readonly created = new Map<string, Model>();

  constructor(
    readonly providers: ModelProviders,
    readonly options: ModelFactoryOptions,
  ) {}

  /** The model of a spec, created on first use. */
  create(spec: string): Model {
    let model = this.created.get(spec);
    if (!model) {
      model = this.providers.create(spec, this.options);
      this.created.set(spec, model);
    }
    return model;
  }

  /** True when the spec's model can be created here (its provider is known and its key is set). */
  private creatable = (spec: string): boolean => {
    try {
      this.create(spec);
      return true;
    } catch {
      return false;
    }
  };

  /**
   * The top run's model (CLI-3): the `--model` spec; else, for the first provider whose key is set
   * in `env`, the document's own `config.model` of that provider, else a model of its `config.tier`
   * from that provider, else the provider's default; else the cassette beside a request file;
   * else none.
   */
  forTopRun(document: RequestDocument, given: { spec?: string; location: string; isFile: boolean; env: Record<string, string | undefined> }): TopModelChoice {
    if (given.spec) return { model: this.create(given.spec), source: 'option', spec: given.spec };
    const config = document.config;
    for (const { provider, key } of KEYED_PROVIDERS) {
      if (!given.env[key]) continue;
      const prefix = `${provider}:`;
      const ofTier = config?.tier ? this.providers.registry.modelForTier(config.tier, { filter: (model) => model.startsWith(prefix) }) : null;
      const spec = config?.model?.startsWith(prefix) ? config.model : (ofTier ?? DEFAULT_MODELS[provider]);
      return { model: this.create(spec), source: 'api-key', spec };
    }
    if (given.isFile) {
      const cassette = siblingCassette(given.location);
      if (existsSync(cassette)) {
        const spec = `replay:${cassette}`;
        return { model: this.create(spec), source: 'cassette', spec };
      }
    }
    return { source: 'none' };
  }

  /**
   * A child run's model (DEL-16): the caller's, when it replays a cassette (which plays every
   * part, so an offline run never turns into a live one); else the child's own `config.model`;
   * else a model of its own `config.tier` that can be created here, the caller's provider first
   * (none → `no_model_available_for_tier`); else the caller's model.
   */
  forChild(document: RequestDocument, inherited: Model | undefined): Model | undefined {
    if (replays(inherited)) return inherited;
    const own = document.config?.model;
    if (own) return this.create(own);
    const tier = document.config?.tier;
    if (!tier) return inherited;
    const provider = inherited?.id.slice(0, inherited.id.indexOf(':'));
    const spec = this.providers.registry.modelForTier(tier, { ...(provider ? { provider } : {}), filter: this.creatable });
    if (!spec) {
      throw new DelegateError(
        'no_model_available_for_tier',
        `No model of tier "${tier}" is available: none is listed in the model catalog that can be used here (check the API keys, or add one to models.json).`,
        { tier },
      );
    }
    return this.create(spec);
  }
}
