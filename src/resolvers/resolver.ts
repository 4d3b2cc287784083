/** The resolver interface: turns a `_delegate` reference into the Request document it names. */
import type { TraceContext } from '../protocol/trace/trace.js';
import type { RequestDocument, ToolSchema } from '../protocol/types.js';

/** Where a delegate reference is resolved from. */
export interface ResolveContext {
  /** The referring document's location: an absolute file path or an http(s) URL; `undefined` for an in-memory document. */
  base?: string;
  /** The tool that carries `_delegate` (anonymous delegates are built from it). */
  toolName: string;
  tool: ToolSchema;
  signal?: AbortSignal;
  /** Whether the referring document is trusted to run local Activities (default true). */
  trusted?: boolean;
  /** The names the referring document gives delegates (its `config.delegates`, DEL-21), asked before the runtime's. */
  delegates?: Readonly<Record<string, string>>;
  /** The W3C trace context of the work resolving it (the delegating call's span), sent with a fetch as `traceparent`/`tracestate` (TEL-6). */
  traceContext?: TraceContext;
}

/** A resolved, loaded and validated delegate: what a ResolverRegistry gives its callers. */
export interface ResolvedRequest {
  /** Canonical location: absolute file path, URL (without integrity fragment), or `anonymous:<tool>`. */
  location: string;
  /** The name a run of it carries: `meta.name`, else the file name without `.json`, else `anonymous:<tool>`. */
  name: string;
  document: RequestDocument;
  /** False for documents from hosts not trusted to run local Activities. */
  trusted: boolean;
  /** The named registry a `_delegate` name was found in (DEL-21); absent for a path, URL or `anonymous`. */
  registry?: DelegateRegistryKind;
}

/** Where a `_delegate` name is looked up, in order (DEL-21): the referring document's registry, the runtime's, then a catalog (the root folder's, or a served parent's server's). */
export type DelegateRegistryKind = 'document' | 'runtime' | 'catalog';

/**
 * What a resolver found: the document exactly as located, not yet read. The ResolverRegistry
 * checks the reference's integrity pin against `content`, then parses and validates it once, with
 * its own message handlers.
 */
export interface LocatedRequest {
  /** Canonical location: absolute file path, URL (without integrity fragment), or `anonymous:<tool>`. */
  location: string;
  /** The document as read or fetched (bytes) or built (text): the pin is checked against exactly this. */
  content: Uint8Array | string;
  /** False for documents from hosts not trusted to run local Activities. */
  trusted: boolean;
  /** The name a run of it carries, when the resolver names it (default: `meta.name`, else the file name). */
  name?: string;
  /** The named registry a `_delegate` name was found in (DEL-21), carried into the ResolvedRequest. */
  registry?: DelegateRegistryKind;
}

/** A resolver handles one form of reference (relative path, URL, `anonymous`, worker name). */
export interface Resolver {
  readonly name: string;
  /** The form of reference it understands, in words, for the error listing them (default: its name). */
  readonly form?: string;
  /** True when this resolver handles the reference in this context. */
  accepts(reference: string, context: ResolveContext): boolean;
  /**
   * Locates the document the reference names (its pin, `#sha256-…`, is left to the registry). A
   * resolver that returns a ResolvedRequest, already read and validated, is taken at its word.
   */
  resolve(reference: string, context: ResolveContext): Promise<LocatedRequest | ResolvedRequest>;
  /**
   * Reads the catalog a reference names (a `delegate-serve` catalog, SERVE-4): the Requests it
   * lists, each with the absolute reference that resolves it (WRK-2). Only resolvers of served
   * documents have one.
   */
  catalog?(reference: string, context: ResolveContext): Promise<CatalogEntry[]>;
  /** Releases what the resolver holds open (the URL resolver's keep-alive connections). */
  close?(): Promise<void>;
}

/** One Request a catalog lists (SERVE-4): its name (DOC-4) and the reference that resolves it. */
export interface CatalogEntry {
  name: string;
  reference: string;
}
