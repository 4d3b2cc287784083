/** The batteries-included Runtime: built-in handlers, the Delegation Activity, resolvers, up-front resolution. */
import { createDelegateActivity, type ChildModelChooser } from './activities/delegate.js';
import { createUpfrontPreparer } from './activities/upfront-preparer.js';
import { createWorkersPreparer } from './activities/workers-preparer.js';
import {
  CreatedWorkers,
  WORKER_CALL_ACTIVITY,
  WORKER_CREATE_ACTIVITY,
  createWorkerCallActivity,
  createWorkerCreateActivity,
} from './activities/created-workers.js';
import { needContext } from './activities/need-context.js';
import { createTierDelegateActivity } from './activities/tier-delegate.js';
import { delegateScopes } from './activities/worker-request.js';
import { ModelChooser, type TierModels } from './models/choose-model.js';
import { NEED_CONTEXT_ACTIVITY, TIER_DELEGATE_ACTIVITY } from './protocol/tools/delegate-tool.js';
import type { ModelFactoryOptions } from './protocol/model.js';
import { ModelProviders } from './models/model-providers.js';
import type { HandlerRegistry } from './protocol/messages/handlers.js';
import { defaultHandlers } from './protocol/messages/builtin-handlers.js';
import { Runtime, type RuntimeOptions } from './protocol/run/runtime.js';
import { DELEGATE_ACTIVITY } from './protocol/constants.js';
import type { Activity } from './protocol/contracts.js';
import { DelegateRegistry, type DelegateTarget } from './resolvers/delegate-registry.js';
import type { RequestDocument } from './protocol/types.js';
import { createDefaultResolvers, type ResolverRegistry } from './resolvers/resolver-registry.js';
import type { UrlResolver } from './resolvers/url-resolver.js';
import { readRequestFile } from './files/read-request-file.js';
import { openJournalFile } from './files/journal-file.js';
import { createFileActivities } from './files/file-toolset.js';
import { LIST_FILES_ACTIVITY, READ_FILE_ACTIVITY, WRITE_FILE_ACTIVITY } from './protocol/tools/file-tools.js';
import { McpConnections } from './mcp/mcp-connections.js';
import { createMcpPreparer } from './mcp/mcp-preparer.js';
import { createMcpActivity } from './mcp/mcp-activity.js';
import { MCP_ACTIVITY } from './mcp/mcp-tools.js';

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
  /**
   * Creates the models documents name (default: the built-in providers, with `process.env`); its
   * catalog also says which models may use the built-in `delegate` tool and which tiers exist, and
   * `tiers` overrides the model of a tier (`--tier`, DEL-28).
   */
  models?: { providers: ModelProviders; options: ModelFactoryOptions; tiers?: TierModels };
  /** Fetch timeout and size cap of URL delegates. */
  fetchTimeoutMs?: number;
  maxBytes?: number;
  /** Where workers created mid-run are also written, one `<name>.json` each, never overwriting (`--workers-dir`, WRK-8). */
  workersDir?: string;
  /** The workers one run tree may create with `worker_create` (`--max-workers`, WRK-11; default 32). */
  maxWorkers?: number;
  /** How long one call's Activity may run before the call fails with `activity_error` (`--activity-timeout`, TOOL-24; default: no limit). */
  activityTimeoutMs?: number;
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
    /** The one model-choice policy its runs use (DEL-16, DEL-28), for choosing the top run's model the same way (CLI-3). */
    readonly models?: ModelChooser,
  ) {
    super({ readRequestFile, openJournal: openJournalFile, ...options });
  }
}

/** The default model choice of a child run (DEL-16), as {@link ModelChooser.forChild} decides it. */
export function ownModelOrInherited(models: { providers: ModelProviders; options: ModelFactoryOptions; tiers?: TierModels } | ModelChooser): ChildModelChooser {
  const chooser = models instanceof ModelChooser ? models : new ModelChooser(models.providers, models.options, models.tiers);
  return (document, inherited, environment, location) => chooser.forChild(document, inherited, environment?.run.standsFor, location);
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
  const models = options.models ?? { providers: new ModelProviders(), options: { cwd: process.cwd(), env: process.env } };
  const chooser = new ModelChooser(models.providers, models.options, models.tiers);
  const runtime = new DelegatingRuntime(
    {
      handlers,
      activities: options.activities ?? {},
      tierCatalog: chooser.tierCatalog(),
      ...(options.activityTimeoutMs === undefined ? {} : { activityTimeoutMs: options.activityTimeoutMs }),
    },
    resolvers,
    delegates,
    chooser,
  );
  const chooseModel = options.chooseModel ?? ownModelOrInherited(chooser);
  // Delegation runs for untrusted documents (its children carry the trust) and ends with its child at cancellation.
  const urls = resolvers.get<UrlResolver>('url');
  const delegation = createDelegateActivity({ resolvers, chooseModel, root: options.root ?? process.cwd(), ...(urls ? { urls } : {}) });
  runtime.registerActivity(DELEGATE_ACTIVITY, delegation, {
    runsUntrusted: true,
    ownsCancellation: true,
  });
  // The delegate tool is a layer on the same child runs (DEL-23); its context is what its calls name (DEL-25).
  runtime.registerActivity(
    TIER_DELEGATE_ACTIVITY,
    createTierDelegateActivity({
      chooseModel: (tier, caller) => chooser.forTier(tier, caller.model, caller.standsFor),
      validate: (document, location) => runtime.validate(document, location),
    }),
    { runsUntrusted: true, ownsCancellation: true, namesContext: ['context'], scopesOf: delegateScopes },
  );
  // Workers created mid-run are kept per run tree and run as children on the same mechanism (WRK-7 to WRK-9).
  const created = {
    store: new CreatedWorkers(),
    validate: (document: RequestDocument, location: string) => runtime.validate(document, location),
    chooseModel,
    root: options.root ?? process.cwd(),
    ...(options.workersDir === undefined ? {} : { workersDir: options.workersDir }),
    ...(options.maxWorkers === undefined ? {} : { maxWorkers: options.maxWorkers }),
  };
  runtime.registerActivity(WORKER_CREATE_ACTIVITY, createWorkerCreateActivity(created), { runsUntrusted: true });
  runtime.registerActivity(WORKER_CALL_ACTIVITY, createWorkerCallActivity({ ...created, delegate: delegation }), {
    runsUntrusted: true,
    ownsCancellation: true,
  });
  runtime.registerActivity(NEED_CONTEXT_ACTIVITY, needContext, { runsUntrusted: true, namesContext: ['missing'] });
  // Workers become delegating tools first, so up-front resolution sees them like any other (WRK-2).
  runtime.registerPreparer(createWorkersPreparer({ resolvers, root: options.root ?? process.cwd() }));
  // The files toolset's Activities touch the file system, so they live here, confined to the root (FILES-2).
  const files = createFileActivities(options.root ?? process.cwd());
  runtime.registerActivity(LIST_FILES_ACTIVITY, files.list);
  runtime.registerActivity(READ_FILE_ACTIVITY, files.read);
  runtime.registerActivity(WRITE_FILE_ACTIVITY, files.write);
  // MCP servers' tools come after the workers', so collisions see both; one connection per run tree, closed with it (MCP-4).
  const connections = new McpConnections();
  runtime.registerPreparer(createMcpPreparer({ connections, root: options.root ?? process.cwd() }));
  runtime.registerActivity(MCP_ACTIVITY, createMcpActivity(connections));
  runtime.onTreeEnd((tree) => connections.closeTree(tree));
  runtime.registerPreparer(createUpfrontPreparer(resolvers, urls));
  return runtime;
}
