/** The name resolver (DEL-21): a `_delegate` name looked up in the referring document's `config.delegates`, then in the runtime's registry. */
import { delegateTargetProblem, isDelegateName } from '../protocol/tools/delegate-names.js';
import { DelegateError } from '../protocol/errors.js';
import type { DelegateRegistry } from './delegate-registry.js';
import type { DelegateRegistryKind, LocatedRequest, ResolveContext, ResolvedRequest, Resolver } from './resolver.js';

/** How many names of one registry a `delegate_not_found` lists. */
export const LISTED_NAMES = 20;

/** Options of {@link NameResolver}. */
export interface NameResolverOptions {
  /** The runtime's named registry, asked after the document's. */
  registry: DelegateRegistry;
  /** Resolves what a name stands for (a path or URL): the registry this resolver belongs to. */
  resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest>;
}

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
 * documents are as trusted as the referring run at most — a name never lends trust. A name
 * neither holds is `delegate_not_found`, naming both registries and the names they hold.
 */
export class NameResolver implements Resolver {
  /** The registry name of this resolver. */
  readonly name = 'name';
  /** The reference form this resolver understands, for error messages. */
  readonly form = "a delegate name (letters, digits, _ or -) given by the document's config.delegates or the runtime's registry";

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
    const documentNames = Object.keys(context.delegates ?? {}).sort();
    const runtimeNames = this.options.registry.names();
    const from = context.base === undefined ? '' : ` from ${context.base}`;
    throw new DelegateError(
      'delegate_not_found',
      `Delegate "${reference}" of tool "${context.toolName}"${from} was not found: no delegate has that name in the document's config.delegates (names: ${listed(documentNames)}) nor in the runtime's registry (names: ${listed(runtimeNames)}).`,
      {
        reference,
        toolName: context.toolName,
        base: context.base,
        registries: [
          { registry: 'document', names: documentNames.slice(0, LISTED_NAMES), count: documentNames.length },
          { registry: 'runtime', names: runtimeNames.slice(0, LISTED_NAMES), count: runtimeNames.length },
        ],
      },
    );
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
        `Delegate "${name}" (${JSON.stringify(target)} in the ${registry === 'document' ? "document's config.delegates" : "runtime's registry"}): ${error.message}`,
        { ...error.data, name, registry },
        { cause: error },
      );
    }
  }
}
