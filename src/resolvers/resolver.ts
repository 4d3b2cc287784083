/** The resolver interface: turns a `_delegate` reference into a loaded Request document. */
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
}

/** A resolved, loaded and validated delegate. */
export interface ResolvedRequest {
  /** Canonical location: absolute file path, URL (without integrity fragment), or `anonymous:<tool>`. */
  location: string;
  /** The name a run of it carries: `meta.name`, else the file name without `.json`, else `anonymous:<tool>`. */
  name: string;
  document: RequestDocument;
  /** False for documents from hosts not trusted to run local Activities. */
  trusted: boolean;
}

/** A resolver handles one form of reference (relative path, URL, `anonymous`, worker name). */
export interface Resolver {
  readonly name: string;
  /** True when this resolver handles the reference in this context. */
  accepts(reference: string, context: ResolveContext): boolean;
  resolve(reference: string, context: ResolveContext): Promise<ResolvedRequest>;
}
