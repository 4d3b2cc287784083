/**
 * The one model-choice policy: which model the top run uses (CLI-3) and which a child run uses
 * (DEL-16). Both read the same document fields (`config.model`, `config.tier`) through the same
 * catalog, create models through the same providers, and create each spec once.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { TierCatalog } from '../protocol/tools/delegate-tool.js';
import { DelegateError, RequestError } from '../protocol/errors.js';
import type { Model, ModelFactoryOptions } from '../protocol/model.js';
import type { RequestDocument } from '../protocol/types.js';
import { providerOf, TIERS, type Tier } from './model-catalog.js';
import type { ModelProviders } from './model-providers.js';
import { recordedModelFor, ReplayStandIn } from './replay-stand-in.js';

/** The model of a tier, as `--tier <tier>=<spec>` overrides the catalog's choice (DEL-28). */
export type TierModels = Partial<Record<Tier, string>>;

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
    /** `--tier` overrides of the catalog's tier → model choice (DEL-28). */
    readonly tierModels: TierModels = {},
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
  forTopRun(
    document: RequestDocument,
    given: { spec?: string; location: string; isFile: boolean; env: Record<string, string | undefined>; name?: string },
  ): TopModelChoice {
    const choice = this.topChoice(document, given);
    // Refused at load, before any model call or Activity (MODEL-13).
    this.checkLimits(document, given.location, choice.model);
    return choice;
  }

  /**
   * Refuses a document whose `config.temperature` or `config.maxTokens` the live model it runs on
   * does not accept (MODEL-13): an `invalid_request` naming the file and the JSON pointer. A
   * replayed model sends nothing, and a model the catalog does not list is not checked.
   */
  checkLimits(document: RequestDocument, location: string, model: Model | undefined): void {
    if (!model || replays(model)) return;
    const problems = this.providers.registry.configProblems(document.config, model.id);
    if (problems.length > 0) throw new RequestError(problems.map((problem) => ({ document: location, ...problem })));
  }

  private topChoice(
    document: RequestDocument,
    given: { spec?: string; location: string; isFile: boolean; env: Record<string, string | undefined>; name?: string },
  ): TopModelChoice {
    // A replayed top run stands for the model its document (or its cassette) names (CAS-15).
    const standing = (model: Model) => (given.name === undefined ? model : ReplayStandIn.of(model, this.standsFor(model, document, given.name)));
    if (given.spec) return { model: standing(this.create(given.spec)), source: 'option', spec: given.spec };
    const config = document.config;
    for (const { provider, key } of KEYED_PROVIDERS) {
      if (!given.env[key]) continue;
      const prefix = `${provider}:`;
      const override = config?.tier ? this.tierModels[config.tier] : undefined;
      const ofTier = config?.tier
        ? override?.startsWith(prefix)
          ? override
          : this.providers.registry.modelForTier(config.tier, { filter: (model) => model.startsWith(prefix) })
        : null;
      const spec = config?.model?.startsWith(prefix) ? config.model : (ofTier ?? DEFAULT_MODELS[provider]);
      return { model: this.create(spec), source: 'api-key', spec };
    }
    if (given.isFile) {
      const cassette = siblingCassette(given.location);
      if (existsSync(cassette)) {
        const spec = `replay:${cassette}`;
        return { model: standing(this.create(spec)), source: 'cassette', spec };
      }
    }
    return { source: 'none' };
  }

  /**
   * The live model a run uses, or, replayed, stands for (CAS-15): a live model is itself; a replay
   * model stands for what it was told (`standsFor`), else the document's `config.model`, else a
   * model of its `config.tier` (`--tier` first), else the model the cassette's entries for the
   * run's request name were recorded with; undefined when none says.
   */
  standsFor(model: Model | undefined, document: RequestDocument, requestName: string): string | undefined {
    if (!model) return undefined;
    if (!replays(model)) return model.id;
    if (model.standsFor !== undefined) return model.standsFor;
    const config = document.config;
    if (config?.model) return config.model;
    const ofTier = config?.tier ? this.specOfTier(config.tier, undefined, true) : null;
    return ofTier ?? recordedModelFor(model, requestName);
  }

  /** The tiers a `delegate` call may ask for: those of the catalog and of `--tier`, cheapest first (DEL-23). */
  tiers(): Tier[] {
    const listed = this.providers.registry.tierNames();
    return TIERS.filter((tier) => listed.includes(tier) || this.tierModels[tier] !== undefined);
  }

  /** What the core learns of the catalog (DEL-23): the tiers, and whether a run's model may delegate (`can_delegate`). */
  tierCatalog(): TierCatalog {
    return {
      tiers: () => this.tiers(),
      standsFor: ({ model, document, name }) => this.standsFor(model, document, name),
      canDelegate: (model) => this.providers.registry.canDelegate(model),
    };
  }

  /**
   * The model of a tier (DEL-16, DEL-28): the `--tier` override, else the catalog's choice with
   * `provider`'s models first. Live, only a model that can be created here counts (its key is set);
   * replayed, any model of a known provider (the cassette answers). Null when there is none.
   */
  private specOfTier(tier: Tier, provider: string | undefined, replayed: boolean): string | null {
    const override = this.tierModels[tier];
    if (override !== undefined) return override;
    const usable = replayed ? (spec: string) => this.providers.has(providerOf(spec) ?? '') : this.creatable;
    return this.providers.registry.modelForTier(tier, { ...(provider ? { provider } : {}), filter: usable });
  }

  /**
   * The model of a tier for a run whose caller runs on `caller` (standing for `callerStandsFor`
   * when its model does not say), replayed when the caller is; `no_model_available_for_tier` when
   * there is none.
   */
  private modelOfTier(tier: Tier, caller: Model | undefined, callerStandsFor?: string): Model {
    if (caller && replays(caller)) {
      const spec = this.specOfTier(tier, providerOf(caller.standsFor ?? callerStandsFor), true);
      if (spec === null) throw noModelFor(tier);
      return ReplayStandIn.of(caller, spec);
    }
    const spec = this.specOfTier(tier, providerOf(caller?.id), false);
    if (spec === null) throw noModelFor(tier);
    try {
      return this.create(spec);
    } catch (error) {
      // Only an override can name a model that cannot be created here.
      throw new DelegateError(
        'no_model_available_for_tier',
        `The model of tier "${tier}" given with --tier, ${spec}, cannot be used here: ${(error as Error).message}`,
        {
          tier,
          model: spec,
        },
      );
    }
  }

  /**
   * A worker's model (DEL-28): the model of `tier`, chosen fresh — the caller's own model does not
   * propagate; only its provider is preferred. When the caller replays a cassette, the worker is
   * played by it too, standing for the tier's model.
   */
  forTier(tier: Tier, caller: Model | undefined, callerStandsFor?: string): Model {
    return this.modelOfTier(tier, caller, callerStandsFor);
  }

  /**
   * A child run's model (DEL-16): the child's own `config.model`; else a model of its own
   * `config.tier` (`--tier` first) that can be created here, the caller's provider first (none →
   * `no_model_available_for_tier`); else the caller's model. When the caller replays a cassette,
   * the cassette plays the child too (so an offline run never turns into a live one), standing for
   * the model so chosen (CAS-15).
   */
  forChild(document: RequestDocument, inherited: Model | undefined, callerStandsFor?: string, location = '(delegate)'): Model | undefined {
    const model = this.childChoice(document, inherited, callerStandsFor);
    // A delegate's configuration the model does not accept fails the call, before the child runs (MODEL-13).
    this.checkLimits(document, location, model);
    return model;
  }

  private childChoice(document: RequestDocument, inherited: Model | undefined, callerStandsFor?: string): Model | undefined {
    const own = document.config?.model;
    const tier = document.config?.tier;
    // Replayed, the cassette plays the child too, standing for the model it would use live (CAS-15).
    if (inherited && replays(inherited)) {
      if (own) return ReplayStandIn.of(inherited, own);
      return tier ? this.modelOfTier(tier, inherited, callerStandsFor) : ReplayStandIn.of(inherited, inherited.standsFor ?? callerStandsFor);
    }
    if (own) return this.create(own);
    return tier ? this.modelOfTier(tier, inherited) : inherited;
  }
}

/** The failure of a tier with no usable model (DEL-16, DEL-26). */
function noModelFor(tier: Tier): DelegateError {
  return new DelegateError(
    'no_model_available_for_tier',
    `No model of tier "${tier}" is available: none is listed in the model catalog that can be used here (check the API keys, add one to models.json, or give one with --tier ${tier}=<provider>:<model>).`,
    { tier },
  );
}
