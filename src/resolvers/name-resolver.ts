/** The name resolver (DEL-21): a `_delegate` name looked up in the referring document's `config.delegates`, the runtime's registry, then a catalog. */
import { delegateTargetProblem, isDelegateName } from '../protocol/tools/delegate-names.js';
import { DelegateError } from '../protocol/errors.js';
import { type CatalogMatch, namedInCatalog, namedInFolder } from './catalog-names.js';
import type { DelegateRegistry } from './delegate-registry.js';
import { isHttpUrl } from './reference-forms.js';
import type { CatalogEntry, DelegateRegistryKind, LocatedRequest, ResolveContext, ResolvedRequest, Resolver } from './resolver.js';

/** How many names of one registry a `delegate_not_found` lists. */
export const LISTED_NAMES = 20;

/** Options of {@link NameResolver}. */
export interface NameResolverOptions {
  /** The runtime's named registry, asked after the document's. */
  registry: DelegateRegistry;
  /** Resolves what a name stands for (a path or URL): the registry this resolver belongs to. */
  resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest>;
  /** The root folder: its catalog is asked third, for a name from a file or an in-memory document. */
  root?: string;
  /** Reads a `delegate-serve` catalog (SERVE-4): a name from a document loaded by URL is looked up in its server's. */
  catalog?(reference: string, context: ResolveContext): Promise<CatalogEntry[]>;
}

/** Where a name was looked for in a catalog, and what it found: for the message and data of `delegate_not_found`. */
interface CatalogLookup extends CatalogMatch {
  /** `the root folder's catalog` or `the catalog of <server>`. */
  where: string;
  /** Why the catalog could not be read, when it could not. */
  unreadable?: string;
}

/** How a message names each place a name is found in. */
const REGISTRY_WORDS: Record<DelegateRegistryKind, string> = {
  document: "the document's config.delegates",
  runtime: "the runtime's registry",
  catalog: 'the catalog',
};

/** The names of a registry as a bounded list for a message: at most {@link LISTED_NAMES}, then how many more. */
function listed(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, LISTED_NAMES).join(', ');
  return names.length > LISTED_NAMES ? `${shown} and ${names.length - LISTED_NAMES} more` : shown;
}

/**
 * Resolves delegate names (`SummarizerAgent`; 1 to 64 letters, digits, `_` or `-`, never
 * `anonymous`). The referring document's `config.delegates` is asked first and its path or URL is
 * resolved as if the document had written it (against the document, confined to the root, under
 * the host rules); then the runtime's registry, whose paths are relative to the root and whose
 * documents are as trusted as the referring run at most — a name never lends trust; then a
 * catalog: the root folder's, or, for a document loaded by URL, its server's (a Request whose file
 * name without `.json` or whose `meta.name` is the name; two are ambiguous). A name none holds is
 * `delegate_not_found`, naming each place searched and the names it holds.
 */
export class NameResolver implements Resolver {
  /** The registry name of this resolver. */
  readonly name = 'name';
  /** The reference form this resolver understands, for error messages. */
  readonly form = "a delegate name (letters, digits, _ or -) given by the document's config.delegates, the runtime's registry or a catalog";

  constructor(private readonly options: NameResolverOptions) {}

  /** Accepts names, whatever the base. */
  accepts(reference: string): boolean {
    return isDelegateName(reference);
  }

  /** Looks the name up, document first, and resolves what it stands for. */
  async resolve(reference: string, context: ResolveContext): Promise<LocatedRequest | ResolvedRequest> {
    const declared = context.delegates !== undefined && Object.hasOwn(context.delegates, reference) ? context.delegates[reference] : undefined;
    if (declared !== undefined) return this.target(reference, declared, 'document', context);
    const registered = this.options.registry.get(reference);
    if (typeof registered === 'string') {
      const found = await this.target(reference, registered, 'runtime', { ...context, base: undefined });
      return { ...found, trusted: found.trusted && (context.trusted ?? true) };
    }
    if (registered !== undefined) {
      const location = `delegates:${reference}`;
      return {
        location,
        content: JSON.stringify(registered),
        trusted: context.trusted ?? true,
        registry: 'runtime',
        ...(registered.meta?.name ? {} : { name: reference }),
      };
    }
    const lookup = await this.lookInCatalog(reference, context);
    if (lookup?.references.length === 1) {
      const [target] = lookup.references as [string];
      const found = await this.target(reference, target, 'catalog', isHttpUrl(target) ? context : { ...context, base: undefined });
      return { ...found, trusted: found.trusted && (context.trusted ?? true) };
    }
    if (lookup !== undefined && lookup.references.length > 1) {
      throw new DelegateError(
        'delegate_not_found',
        `Delegate "${reference}" of tool "${context.toolName}" is ambiguous: ${lookup.where} has ${lookup.references.length} Requests of that name, ${lookup.references.join(' and ')}; give it a path, or a name in config.delegates.`,
        { reference, toolName: context.toolName, registry: 'catalog', candidates: lookup.references },
      );
    }
    const documentNames = Object.keys(context.delegates ?? {}).sort();
    const runtimeNames = this.options.registry.names();
    const from = context.base === undefined ? '' : ` from ${context.base}`;
    const searched = lookup === undefined ? '' : `, nor in ${lookup.where} (${lookup.unreadable ?? `names: ${listed(lookup.names)}`})`;
    throw new DelegateError(
      'delegate_not_found',
      `Delegate "${reference}" of tool "${context.toolName}"${from} was not found: no delegate has that name in the document's config.delegates (names: ${listed(documentNames)}), in the runtime's registry (names: ${listed(runtimeNames)})${searched}.`,
      {
        reference,
        toolName: context.toolName,
        base: context.base,
        registries: [
          { registry: 'document', names: documentNames.slice(0, LISTED_NAMES), count: documentNames.length },
          { registry: 'runtime', names: runtimeNames.slice(0, LISTED_NAMES), count: runtimeNames.length },
          ...(lookup === undefined ? [] : [{ registry: 'catalog', names: lookup.names.slice(0, LISTED_NAMES), count: lookup.names.length }]),
        ],
      },
    );
  }

  /**
   * The third place a name is looked for (DEL-21): for a document loaded by URL, its server's
   * catalog (SERVE-4, at `/` of its origin); else the root folder's. Undefined when there is none
   * to ask. A server catalog that cannot be read names nothing, and the reason is kept for the
   * not-found message.
   */
  private async lookInCatalog(name: string, context: ResolveContext): Promise<CatalogLookup | undefined> {
    if (isHttpUrl(context.base)) {
      if (this.options.catalog === undefined) return undefined;
      const url = new URL('/', context.base).href;
      const where = `the catalog of ${url}`;
      try {
        return { where, ...namedInCatalog(await this.options.catalog(url, context), name) };
      } catch (error) {
        if (!(error instanceof DelegateError)) throw error;
        return { where, references: [], names: [], unreadable: `unreadable: ${error.message}` };
      }
    }
    if (this.options.root === undefined) return undefined;
    return { where: "the root folder's catalog", ...(await namedInFolder(this.options.root, name)) };
  }

  /** Resolves the path or URL a name stands for, as the registry that named it. */
  private async target(name: string, target: string, registry: DelegateRegistryKind, context: ResolveContext): Promise<ResolvedRequest> {
    // Names never chain: a registry entry must be a path or URL (checked on load and on registering too).
    const problem = delegateTargetProblem(target);
    if (problem) {
      throw new DelegateError(
        'delegate_not_found',
        `Delegate "${name}" of tool "${context.toolName}" cannot be resolved: the ${registry} registry's entry is wrong. ${problem}`,
        {
          reference: name,
          registry,
        },
      );
    }
    try {
      return { ...(await this.options.resolve(target, context)), registry };
    } catch (error) {
      // Said in the name's terms too: which registry gave it which target.
      if (!(error instanceof DelegateError)) throw error;
      throw new DelegateError(
        error.code,
        `Delegate "${name}" (${JSON.stringify(target)} in ${REGISTRY_WORDS[registry]}): ${error.message}`,
        { ...error.data, name, registry },
        { cause: error },
      );
    }
  }
}
