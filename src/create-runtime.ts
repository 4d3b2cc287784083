/** The batteries-included Runtime: built-in handlers, the Delegation Activity, resolvers, up-front resolution. */
import { createDelegateActivity, type ChildModelChooser } from './activities/delegate.js';
import { createUpfrontPreparer } from './activities/upfront-preparer.js';
import type { Model, ModelFactoryOptions } from './protocol/model.js';
import { ModelProviders } from './models/model-providers.js';
import { DelegateError } from './protocol/errors.js';
import type { HandlerRegistry } from './protocol/handlers.js';
import { DELEGATE_ACTIVITY, Runtime, type Activity } from './protocol/runtime.js';
import { createDefaultResolvers, type ResolverRegistry } from './resolvers/resolver-registry.js';

/** Options of {@link createRuntime}. */
export interface CreateRuntimeOptions {
  /** The folder file delegates are confined to (default: the current directory). */
  root?: string;
  /** Hosts URL delegates may be fetched from. */
  allowHosts?: string[];
  /** Hosts whose documents may run local Activities. */
  trustHosts?: string[];
  /** Activities to register, by name. */
  activities?: Record<string, Activity>;
  /** Message handlers (default: the built-in ones). */
  handlers?: HandlerRegistry;
  /**
   * Picks a child run's model. Default: the child's own `config.model` (created through
   * `models`), else the caller's; a replayed cassette plays every run's part.
   */
  chooseModel?: ChildModelChooser;
  /** Creates the models documents name (default: the built-in providers, with `process.env`). */
  models?: { providers: ModelProviders; options: ModelFactoryOptions };
  /** Fetch timeout and size cap of URL delegates. */
  fetchTimeoutMs?: number;
  maxBytes?: number;
}

/** A Runtime that can delegate: it owns its resolvers too. */
export interface DelegatingRuntime extends Runtime {
  readonly resolvers: ResolverRegistry;
}

/**
 * The default model choice of a child run (PROTOCOL.md section 12): its own `config.model`; else
 * a model of its own `config.tier` from the model registry (the caller's provider first, and only
 * models that can be created here, e.g. whose API key is set; none →
 * `no_model_available_for_tier`); else the caller's model. When the caller replays a cassette, the
 * cassette plays every part, so an offline run never turns into a live one. Models are created
 * once per spec.
 */
export function ownModelOrInherited(models: { providers: ModelProviders; options: ModelFactoryOptions }): ChildModelChooser {
  const created = new Map<string, Model>();
  const create = (spec: string): Model => {
    let model = created.get(spec);
    if (!model) {
      model = models.providers.create(spec, models.options);
      created.set(spec, model);
    }
    return model;
  };
  const creatable = (spec: string): boolean => {
    try {
      create(spec);
      return true;
    } catch {
      return false;
    }
  };
  return (document, inherited) => {
    if (inherited?.id.startsWith('replay:')) return inherited;
    const own = document.config?.model;
    if (own) return create(own);
    const tier = document.config?.tier;
    if (!tier) return inherited;
    const provider = inherited?.id.slice(0, inherited.id.indexOf(':'));
    const spec = models.providers.registry.modelForTier(tier, { ...(provider ? { provider } : {}), filter: creatable });
    if (!spec) {
      throw new DelegateError(
        'no_model_available_for_tier',
        `No model of tier "${tier}" is available: none is listed in the model registry that can be used here (check the API keys, or add one to models.json).`,
        { tier },
      );
    }
    return create(spec);
  };
}

/** Creates a Runtime with everything the protocol defines registered. */
export function createRuntime(options: CreateRuntimeOptions = {}): DelegatingRuntime {
  const runtime = new Runtime({ ...(options.handlers ? { handlers: options.handlers } : {}), activities: options.activities ?? {} });
  const resolvers = createDefaultResolvers({
    root: options.root ?? process.cwd(),
    handlers: runtime.handlers,
    ...(options.allowHosts ? { allowHosts: options.allowHosts } : {}),
    ...(options.trustHosts ? { trustHosts: options.trustHosts } : {}),
    ...(options.fetchTimeoutMs ? { fetchTimeoutMs: options.fetchTimeoutMs } : {}),
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
  });
  const chooseModel =
    options.chooseModel ?? ownModelOrInherited(options.models ?? { providers: new ModelProviders(), options: { cwd: process.cwd(), env: process.env } });
  runtime.registerActivity(DELEGATE_ACTIVITY, createDelegateActivity({ resolvers, chooseModel }));
  runtime.preparers.push(createUpfrontPreparer(resolvers));
  return Object.assign(runtime, { resolvers });
}
