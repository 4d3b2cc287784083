/** The resolver registry: resolvers in order, the first that accepts a reference resolves it; plus the default set. */
import { defaultHandlers } from '../protocol/messages/builtin-handlers.js';
import { DelegateError } from '../protocol/errors.js';
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { AnonymousResolver } from './anonymous-resolver.js';
import { DelegateRegistry } from './delegate-registry.js';
import { FileResolver } from './file-resolver.js';
import { NameResolver } from './name-resolver.js';
import { readLocatedRequest } from './read-located-request.js';
import type { CatalogEntry, ResolveContext, ResolvedRequest, Resolver } from './resolver.js';
import { UrlResolver } from './url-resolver.js';

/** The human description of the references a resolver understands: its `form` when it has one, else its name. */
export function describeResolver(resolver: Resolver): string {
  return resolver.form ?? `references handled by the "${resolver.name}" resolver`;
}

/** Options of a {@link ResolverRegistry}. */
export interface ResolverRegistryOptions {
  /** The message handlers located documents are validated with (default: the built-in ones). */
  handlers?: HandlerRegistry;
}

/**
 * Holds resolvers in order and resolves a reference with the first that accepts it, then reads
 * what it located: the integrity pin checked and the document validated here, once for every
 * resolver. It is itself a Resolver, so registries compose. No resolver accepting is
 * `delegate_not_found`, listing the forms understood.
 */
export class ResolverRegistry implements Resolver {
  /** The registry name when used as a resolver. */
  readonly name = 'registry';
  private readonly ordered: Resolver[] = [];
  private readonly handlers: HandlerRegistry;

  constructor(resolvers: Iterable<Resolver> = [], options: ResolverRegistryOptions = {}) {
    this.handlers = options.handlers ?? defaultHandlers();
    for (const resolver of resolvers) this.register(resolver);
  }

  /** Releases what resolvers hold open (the URL resolver's keep-alive connections). */
  async close(): Promise<void> {
    await Promise.all(this.ordered.map((resolver) => resolver.close?.()));
  }

  /**
   * Adds a resolver: last by default, or first with `{ first: true }` (to take precedence, e.g. a
   * worker registry resolving names). A resolver with the same name is replaced in place.
   */
  register(resolver: Resolver, options: { first?: boolean } = {}): this {
    const existing = this.ordered.findIndex((entry) => entry.name === resolver.name);
    if (existing >= 0) this.ordered[existing] = resolver;
    else if (options.first) this.ordered.unshift(resolver);
    else this.ordered.push(resolver);
    return this;
  }

  /** The resolver registered under `name`, typed by the caller (e.g. `get<UrlResolver>('url')` to read its stats). */
  get<T extends Resolver = Resolver>(name: string): T | undefined {
    return this.ordered.find((resolver) => resolver.name === name) as T | undefined;
  }

  /** The registered resolvers, in the order they are asked. */
  list(): readonly Resolver[] {
    return [...this.ordered];
  }

  /** The first resolver accepting the reference, or undefined. */
  find(reference: string, context: ResolveContext): Resolver | undefined {
    return this.ordered.find((resolver) => resolver.accepts(reference, context));
  }

  /** True when some registered resolver accepts the reference. */
  accepts(reference: string, context: ResolveContext): boolean {
    return this.find(reference, context) !== undefined;
  }

  /**
   * Resolves with the first accepting resolver and reads what it located (pin, parse, validation);
   * `delegate_not_found` listing the forms understood when none accepts.
   */
  async resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest> {
    const resolver = this.find(reference, context);
    if (!resolver) {
      const forms = this.ordered.map(describeResolver);
      const from = context.base === undefined ? '' : ` from ${context.base}`;
      throw new DelegateError(
        'delegate_not_found',
        `Delegate "${reference}" of tool "${context.toolName}"${from} was not found: no resolver understands it. Understood forms: ${forms.join('; ') || '(no resolvers registered)'}.`,
        { reference, toolName: context.toolName, base: context.base, available: this.ordered.map((entry) => entry.name) },
      );
    }
    const found = await resolver.resolve(reference, context);
    return 'document' in found ? found : readLocatedRequest(reference, found, this.handlers);
  }

  /** Reads the catalog a reference names with the first accepting resolver, when it reads catalogs (WRK-2); `delegate_not_found` otherwise. */
  async catalog(reference: string, context: ResolveContext): Promise<CatalogEntry[]> {
    const resolver = this.find(reference, context);
    if (resolver?.catalog === undefined)
      throw new DelegateError('delegate_not_found', `"${reference}" names no catalog a resolver can read: catalogs are delegate-serve URLs.`, { reference });
    return resolver.catalog(reference, context);
  }
}

/** Options of {@link createDefaultResolvers}. */
export interface DefaultResolverOptions {
  /** The folder file delegates are confined to. */
  root: string;
  /** Hosts URL delegates may be fetched from (`host` = any port, `host:port` = that port). */
  allowHosts?: string[];
  /** Hosts whose documents are trusted to run local Activities (implicitly allowed too). */
  trustHosts?: string[];
  /** The message handlers documents are validated with (default: the built-in ones). */
  handlers?: HandlerRegistry;
  /** Timeout of each fetch phase (connect, headers, idle body), in ms; default 10 000. */
  fetchTimeoutMs?: number;
  /** Size cap of a fetched document, in bytes; default 1 MiB. */
  maxBytes?: number;
  /** The runtime's named registry of delegates (DEL-21), asked after a document's `config.delegates` (default: an empty one). */
  delegates?: DelegateRegistry;
}

/** A registry with the default resolvers, in order: `anonymous`, `name`, `url`, `file`. */
export function createDefaultResolvers(options: DefaultResolverOptions): ResolverRegistry {
  // The name resolver resolves what a name stands for through the registry it belongs to.
  const registry: ResolverRegistry = new ResolverRegistry(
    [
      new AnonymousResolver(),
      new NameResolver({
        registry: options.delegates ?? new DelegateRegistry(),
        resolve: (reference, context) => registry.resolve(reference, context),
        catalog: (reference, context) => registry.catalog(reference, context),
        root: options.root,
      }),
      new UrlResolver({
        allowHosts: options.allowHosts,
        trustHosts: options.trustHosts,
        timeoutMs: options.fetchTimeoutMs,
        maxBytes: options.maxBytes,
      }),
      new FileResolver({ root: options.root }),
    ],
    options.handlers ? { handlers: options.handlers } : {},
  );
  return registry;
}
