/** The read-only HTTP handler of `delegate-serve`: a `fetch`-style function serving a folder of Request documents. */
import { resolve } from 'node:path';
import { defaultHandlers } from '../protocol/builtin-handlers.js';
import type { HandlerRegistry } from '../protocol/handlers.js';
import { listDocumentPaths, readConfinedDocument, readConfinedDocumentUnless } from './confined-folder.js';
import { entityTag, ifNoneMatchMatches } from './entity-tags.js';
import { parseRequestPath, urlPathOf } from './parse-request-path.js';
import { createDocumentValidator, type CatalogEntry, type DocumentValidator } from './validate-document.js';

/** Options of `createRequestHandler`. */
export interface RequestHandlerOptions {
  /** The folder whose Request documents are served (a relative path is resolved against the current working folder, once). */
  root: string;
  /** Message handlers documents are validated with (default: `defaultHandlers()`). */
  handlers?: HandlerRegistry;
  /** Receives one access-log line per request (default: written to stderr). */
  log?: (line: string) => void;
  /** Receives unexpected errors behind a `500` answer (default: written to stderr). */
  onError?: (error: unknown) => void;
}

/**
 * What the transport knows about a request beyond the `Request` itself, passed beside it so that no
 * client-supplied header can forge it.
 */
export interface ConnectionInfo {
  /** The client's address, for the access log. */
  remoteAddress?: string;
  /**
   * The request-target exactly as received (Node's `req.url`), before WHATWG URL parsing removed
   * dot segments and turned backslashes into slashes. When it starts with `/`, paths are judged on
   * it, so `/a/../b.json` is refused as written instead of quietly served as `/b.json`.
   */
  rawTarget?: string;
}

/** A `fetch`-style request handler: any runtime with `Request`/`Response` can host it. */
export type RequestHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>;

/** What every answer is built from before it becomes a Response (and an access-log line). */
interface Reply {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const ALLOWED_METHODS = 'GET, HEAD';
const MAX_LOGGED_PATH = 512;
const encoder = new TextEncoder();

/**
 * Creates the handler serving the Request documents under `options.root`, read-only:
 *
 * - `GET`/`HEAD /<path>.json`: the stored bytes with a strong `ETag` and `cache-control: no-cache`;
 *   a matching `If-None-Match` answers `304`. A document that fails validation answers `422`
 *   `{error: {code: 'invalid_request', message, problems}}`.
 * - `GET`/`HEAD /`: the catalog `[{path, name, description, input, output}]` of the valid documents,
 *   sorted by path, with its own `ETag`.
 * - `404` `{error: {code: 'not_found'}}` for anything else: outside the folder, dotfiles and
 *   dot-folders, names not ending in `.json`, folders, symlinks whose real path leaves the folder,
 *   and malformed or suspicious paths (see `parseRequestPath`). Other methods answer `405`.
 *
 * Files are read fresh on every request, except a conditional one for a version already served
 * valid, answered `304` from the file's stat (SERVE-9); validation verdicts are cached, keyed by path and
 * content hash. Every request produces exactly one access-log line:
 * `<client or -> <method> <path> <status> <bytes>B <ms>ms`.
 */
export function createRequestHandler(options: RequestHandlerOptions): RequestHandler {
  // Resolved once, so a later change of the process's working folder cannot move what is served.
  const root = resolve(options.root);
  const validate = createDocumentValidator(options.handlers ?? defaultHandlers());
  const tags = new ServedVersions();
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const onError =
    options.onError ??
    ((error: unknown) => void process.stderr.write(`delegate-serve: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`));

  return async (request, info = {}) => {
    const started = performance.now();
    const pathname = pathOf(request, info);
    let reply: Reply;
    try {
      reply = await answer(request, pathname, root, validate, tags);
    } catch (error) {
      onError(error);
      reply = jsonError(500, 'internal_error', 'The server failed to answer this request.');
    }
    const head = request.method === 'HEAD';
    const bodyBytes = head || reply.body === undefined ? 0 : reply.body.byteLength;
    const milliseconds = Math.round(performance.now() - started);
    log(`${info.remoteAddress ?? '-'} ${request.method} ${printable(pathname)} ${reply.status} ${bodyBytes}B ${milliseconds}ms`);
    const headers: Record<string, string> = { 'x-content-type-options': 'nosniff', ...reply.headers };
    if (reply.body !== undefined) headers['content-length'] = String(reply.body.byteLength);
    const body = head || reply.body === undefined ? null : reply.body;
    return new Response(body, { status: reply.status, headers });
  };
}

async function answer(request: Request, pathname: string, root: string, validate: DocumentValidator, tags: ServedVersions): Promise<Reply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    const reply = jsonError(405, 'method_not_allowed', `Expected GET or HEAD, got ${request.method}: this server is read-only.`);
    reply.headers.allow = ALLOWED_METHODS;
    return reply;
  }
  const target = parseRequestPath(pathname);
  if (target.kind === 'refused') return notFound();
  const ifNoneMatch = request.headers.get('if-none-match');
  if (target.kind === 'catalog') {
    const entries = await catalog(root, validate);
    return cacheable(jsonBytes(entries), ifNoneMatch);
  }
  // A conditional request for a version of the file already served valid is answered from its stat alone (SERVE-9).
  const known = (identity: string) => {
    const served = tags.get(identity);
    return served !== undefined && served.path === target.path && ifNoneMatchMatches(ifNoneMatch, served.tag);
  };
  const file = await readConfinedDocumentUnless(root, target.segments, ifNoneMatch === null ? () => false : known);
  if (file === undefined) return notFound();
  if (file.bytes === undefined) return { status: 304, headers: cacheHeaders((tags.get(file.identity) as ServedVersion).tag) };
  const bytes = file.bytes;
  const tag = entityTag(bytes);
  const validation = validate(target.path, bytes, tag);
  if (validation.ok) tags.remember(file.identity, { path: target.path, tag });
  if (!validation.ok) {
    const count = validation.problems.length;
    return {
      status: 422,
      headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-cache' },
      body: jsonBytes({
        error: {
          code: 'invalid_request',
          message: `The Request document ${target.path} is invalid (${count} ${count === 1 ? 'problem' : 'problems'}).`,
          problems: validation.problems,
        },
      }),
    };
  }
  return cacheable(bytes, ifNoneMatch, tag);
}

/**
 * The catalog of the valid documents, read and validated afresh (verdicts come from the cache when
 * the bytes are unchanged). Each entry's `path` is the URL path a GET answers (SERVE-4), sorted.
 */
async function catalog(root: string, validate: DocumentValidator): Promise<CatalogEntry[]> {
  const entries: CatalogEntry[] = [];
  for (const segments of await listDocumentPaths(root)) {
    const path = urlPathOf(segments);
    if (path === undefined) continue;
    const bytes = await readConfinedDocument(root, segments);
    if (bytes === undefined) continue;
    const validation = validate(`/${segments.join('/')}`, bytes, entityTag(bytes));
    if (validation.ok) entries.push({ path, ...validation.entry });
  }
  return entries.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
}

/** What a `200` or `304` of a document carries besides its body. */
function cacheHeaders(tag: string): Record<string, string> {
  return { etag: tag, 'cache-control': 'no-cache' };
}

/** A `200` with an ETag, or `304` when `If-None-Match` already holds it. */
function cacheable(body: Uint8Array, ifNoneMatch: string | null, tag = entityTag(body)): Reply {
  const headers = cacheHeaders(tag);
  if (ifNoneMatchMatches(ifNoneMatch, tag)) return { status: 304, headers };
  return { status: 200, headers: { ...headers, 'content-type': JSON_TYPE }, body };
}

/** A version of a document served valid: its URL path and entity tag. */
interface ServedVersion {
  path: string;
  tag: string;
}

/** The versions served valid, by file identity (SERVE-9); the oldest are forgotten beyond a bound. */
class ServedVersions extends Map<string, ServedVersion> {
  /** Files remembered at most: beyond it the oldest is dropped. */
  static readonly LIMIT = 4096;

  /** Remembers a version served valid. */
  remember(identity: string, version: ServedVersion): void {
    this.delete(identity);
    if (this.size >= ServedVersions.LIMIT) this.delete(this.keys().next().value as string);
    this.set(identity, version);
  }
}

function notFound(): Reply {
  // The message never echoes the path: it is in the client's hands already, and nothing about the disk is told.
  return jsonError(404, 'not_found', 'No Request document is served at this path.');
}

function jsonError(status: number, code: string, message: string): Reply {
  return { status, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-cache' }, body: jsonBytes({ error: { code, message } }) };
}

function jsonBytes(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value, null, 2)}\n`);
}

/** The path to judge: the raw target when the transport gave one in origin-form, else the parsed URL's path. */
function pathOf(request: Request, info: ConnectionInfo): string {
  const raw = info.rawTarget;
  if (raw?.startsWith('/')) return raw.replace(/[?#].*$/s, '');
  return new URL(request.url).pathname;
}

/** The path as one log token: no spaces or control characters, bounded length. */
function printable(path: string): string {
  const escaped = path.replace(/[^\x21-\x7e]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return escaped.length > MAX_LOGGED_PATH ? `${escaped.slice(0, MAX_LOGGED_PATH)}...` : escaped;
}
