/** The batteries-included Runtime: built-in handlers, the Delegation Activity, resolvers, up-front resolution. */
import { createDelegateActivity, type ChildModelChooser } from './activities/delegate.js';
import { createUpfrontPreparer } from './activities/upfront-preparer.js';
import { ModelChooser } from './models/choose-model.js';
import type { ModelFactoryOptions } from './protocol/model.js';
import { ModelProviders } from './models/model-providers.js';
import type { HandlerRegistry } from './protocol/handlers.js';
import { defaultHandlers } from './protocol/builtin-handlers.js';
import { DELEGATE_ACTIVITY, Runtime, type Activity, type RuntimeOptions } from './protocol/runtime.js';
import { DelegateRegistry, type DelegateTarget } from './resolvers/delegate-registry.js';
import { createDefaultResolvers, type ResolverRegistry } from './resolvers/resolver-registry.js';
import { readRequestFile } from './files/read-request-file.js';

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
  /**
   * Names for delegates (DEL-21): `_delegate: "SummarizerAgent"` resolves through the document's
   * `config.delegates`, then these. A path is relative to `root`, a URL follows the host rules, a
   * document is run as given. More can be registered later on `runtime.delegates`.
   */
  delegates?: Record<string, DelegateTarget>;
}

/** A Runtime that can delegate: it owns its resolvers too, and loads Request files from the file system by default. */
export class DelegatingRuntime extends Runtime {
  constructor(
    options: RuntimeOptions,
    /** The resolvers delegate references go through, in order (DEL-3). */
    readonly resolvers: ResolverRegistry,
    /** The runtime's named registry of delegates, asked after a document's `config.delegates` (DEL-21). */
    readonly delegates: DelegateRegistry = new DelegateRegistry(),
  ) {
    super({ readRequestFile, ...options });
  }
}

/** The default model choice of a child run (DEL-16), as {@link ModelChooser.forChild} decides it. */
export function ownModelOrInherited(models: { providers: ModelProviders; options: ModelFactoryOptions }): ChildModelChooser {
  const chooser = new ModelChooser(models.providers, models.options);
  return (document, inherited) => chooser.forChild(document, inherited);
}

/** Creates a Runtime with everything the protocol defines registered. */
export function createRuntime(options: CreateRuntimeOptions = {}): DelegatingRuntime {
  const handlers = options.handlers ?? defaultHandlers();
  const delegates = new DelegateRegistry(options.delegates);
  const resolvers = createDefaultResolvers({
    root: options.root ?? process.cwd(),
    handlers,
    delegates,
    ...(options.allowHosts ? { allowHosts: options.allowHosts } : {}),
    ...(options.trustHosts ? { trustHosts: options.trustHosts } : {}),
    ...(options.fetchTimeoutMs ? { fetchTimeoutMs: options.fetchTimeoutMs } : {}),
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
  });
  const runtime = new DelegatingRuntime({ handlers, activities: options.activities ?? {} }, resolvers, delegates);
  const chooseModel =
    options.chooseModel ?? ownModelOrInherited(options.models ?? { providers: new ModelProviders(), options: { cwd: process.cwd(), env: process.env } });
  // Delegation runs for untrusted documents (its children carry the trust) and ends with its child at cancellation.
  runtime.registerActivity(DELEGATE_ACTIVITY, createDelegateActivity({ resolvers, chooseModel }), { runsUntrusted: true, ownsCancellation: true });
  runtime.registerPreparer(createUpfrontPreparer(resolvers));
  return runtime;
}
