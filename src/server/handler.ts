/** The read-only HTTP handler of `delegate-serve`: a `fetch`-style function serving a folder of Request documents. */
import { resolve } from 'node:path';
import { defaultHandlers } from '../protocol/messages/builtin-handlers.js';
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { coalescePerTurn } from './coalesce-per-turn.js';
import { listDocumentPaths, readConfinedDocument, statConfinedDocuments } from './confined-folder.js';
import { DocumentCache } from './document-cache.js';
import { entityTag, ifNoneMatchMatches } from './entity-tags.js';
import { parseRequestPath, urlPathOf } from './parse-request-path.js';
import type { PlainHandler, PlainReply } from './plain-exchange.js';
import { type CatalogEntry, validateDocument } from './validate-document.js';

/** How many documents the catalog looks up at once. */
const CATALOG_BATCH = 256;
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

/**
 * A `fetch`-style request handler: any runtime with `Request`/`Response` can host it. It also
 * offers `plain`, the same answers for a request given as plain facts, which the Node listener
 * uses for GET and HEAD so that no web `Request` or `Response` is built for them (SERVE-12).
 */
export type RequestHandler = ((request: Request, info?: ConnectionInfo) => Promise<Response>) & {
  plain: PlainHandler;
  /** The catalog of the valid documents, sorted by path, as `GET /` lists them (SERVE-4). */
  catalog(): Promise<CatalogEntry[]>;
  /**
   * The valid document a `GET` of `pathname` (a URL path ending in `.json`, still percent-encoded)
   * would answer with, looked up and confined the same way (SERVE-6, SERVE-11): its catalog entry and
   * its decoded segments below the folder; undefined when nothing valid is served there.
   */
  entry(pathname: string): Promise<{ entry: CatalogEntry; segments: string[] } | undefined>;
};

/** What a document's answers are made of, built once per version of its file (SERVE-11). */
type DocumentAnswer =
  | {
      valid: true;
      /** Its strong entity tag. */
      tag: string;
      /** Its catalog entry but for the path. */
      entry: Omit<CatalogEntry, 'path'>;
      /** The `200` with its bytes. */
      ok: PlainReply;
      /** The `304` for a client that holds the tag. */
      notModified: PlainReply;
    }
  | {
      valid: false;
      /** The `422` naming its problems. */
      invalid: PlainReply;
    };

const JSON_TYPE = 'application/json; charset=utf-8';
const ALLOWED_METHODS = 'GET, HEAD';
const MAX_LOGGED_PATH = 512;
// A path made only of printable ASCII needs no escaping in the log.
const PLAIN_LOG_TOKEN = /^[\x21-\x7e]*$/;
const encoder = new TextEncoder();
const NOT_FOUND = notFound();

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
 * Every request looks the file up again (confined, SERVE-6) and reads its metadata; a version of
 * the file already read is answered from memory, bytes, tag and verdict, and any other version is
 * read, hashed and validated afresh (SERVE-9, SERVE-11). Every request produces exactly one
 * access-log line: `<client or -> <method> <path> <status> <bytes>B <ms>ms`.
 */
export function createRequestHandler(options: RequestHandlerOptions): RequestHandler {
  // Resolved once, so a later change of the process's working folder cannot move what is served.
  const root = resolve(options.root);
  const handlers = options.handlers ?? defaultHandlers();
  const cache = new DocumentCache<DocumentAnswer>();
  // The requests of one turn share one look at each file, made after the turn (SERVE-12).
  const versionOf = coalescePerTurn(
    (document: { path: string; segments: readonly string[] }) => document.path,
    (documents) =>
      statConfinedDocuments(
        root,
        documents.map((document) => document.segments),
      ),
  );
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const onError =
    options.onError ??
    ((error: unknown) => void process.stderr.write(`delegate-serve: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`));

  /** The answers for the document at `segments` (named `path`), from the cache while its file is unchanged; undefined when not servable. */
  const documentAnswer = async (segments: readonly string[], path: string): Promise<DocumentAnswer | undefined> => {
    if (cache.has(path)) {
      const version = await versionOf({ path, segments });
      const cached = version === undefined ? undefined : cache.get(path, version);
      if (cached !== undefined) return cached.answer;
      if (version === undefined) {
        cache.delete(path);
        return undefined;
      }
    }
    const file = await readConfinedDocument(root, segments);
    if (file === undefined) {
      cache.delete(path);
      return undefined;
    }
    const answer = answerOf(path, file.bytes, handlers);
    const size = answer.valid ? (answer.ok.body?.byteLength ?? 0) : (answer.invalid.body?.byteLength ?? 0);
    cache.set(path, { version: file.identity, size, answer });
    return answer;
  };

  /** The catalog of the valid documents, each looked up as a GET would (SERVE-4), sorted by path. */
  const catalog = async (): Promise<CatalogEntry[]> => {
    // The documents are asked for CATALOG_BATCH at once, so their looks share one turn (SERVE-12) instead of one turn
    // each, and a folder of tens of thousands of documents never holds more files open than that (EMFILE).
    const paths = await listDocumentPaths(root);
    const listed: (CatalogEntry | undefined)[] = [];
    for (let start = 0; start < paths.length; start += CATALOG_BATCH) {
      const batch = paths.slice(start, start + CATALOG_BATCH).map(async (segments) => {
        const path = urlPathOf(segments);
        const answer = path === undefined ? undefined : await documentAnswer(segments, `/${segments.join('/')}`);
        return path !== undefined && answer?.valid ? { path, ...answer.entry } : undefined;
      });
      listed.push(...(await Promise.all(batch)));
    }
    const entries = listed.filter((entry): entry is CatalogEntry => entry !== undefined);
    return entries.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  };

  const answer = async (method: string, pathname: string, ifNoneMatch: string | null): Promise<PlainReply> => {
    if (method !== 'GET' && method !== 'HEAD') {
      const message = `Expected GET or HEAD, got ${method}: this server is read-only.`;
      return jsonReply(405, { error: { code: 'method_not_allowed', message } }, { allow: ALLOWED_METHODS });
    }
    const target = parseRequestPath(pathname);
    if (target.kind === 'refused') return NOT_FOUND;
    if (target.kind === 'catalog') {
      const body = jsonBytes(await catalog());
      const tag = entityTag(body);
      return ifNoneMatchMatches(ifNoneMatch, tag) ? reply(304, cacheHeaders(tag)) : reply(200, { ...cacheHeaders(tag), 'content-type': JSON_TYPE }, body);
    }
    const document = await documentAnswer(target.segments, target.path);
    if (document === undefined) return NOT_FOUND;
    if (!document.valid) return document.invalid;
    return ifNoneMatchMatches(ifNoneMatch, document.tag) ? document.notModified : document.ok;
  };

  /** Answers one request and writes its access-log line: the one path both faces of the handler take. */
  const plain: PlainHandler = async (request) => {
    const started = performance.now();
    const pathname = pathOfTarget(request.target);
    let result: PlainReply;
    try {
      result = await answer(request.method, pathname, request.ifNoneMatch);
    } catch (error) {
      onError(error);
      result = jsonReply(500, { error: { code: 'internal_error', message: 'The server failed to answer this request.' } });
    }
    const bodyBytes = request.method === 'HEAD' || result.body === undefined ? 0 : result.body.byteLength;
    const milliseconds = Math.round(performance.now() - started);
    log(`${request.remoteAddress ?? '-'} ${request.method} ${printable(pathname)} ${result.status} ${bodyBytes}B ${milliseconds}ms`);
    return result;
  };

  const handler = async (request: Request, info: ConnectionInfo = {}): Promise<Response> => {
    const raw = info.rawTarget;
    // The raw target when the transport gave one in origin-form, else the parsed URL's path and query.
    const target = raw?.startsWith('/') ? raw : new URL(request.url).pathname;
    const ifNoneMatch = request.headers.get('if-none-match');
    const result = await plain({ method: request.method, target, ifNoneMatch, remoteAddress: info.remoteAddress });
    const body = request.method === 'HEAD' || result.body === undefined ? null : result.body;
    return new Response(body, { status: result.status, headers: result.headers });
  };
  const entry = async (pathname: string) => {
    const target = parseRequestPath(pathname);
    if (target.kind !== 'document') return undefined;
    const document = await documentAnswer(target.segments, target.path);
    const path = urlPathOf(target.segments);
    return document?.valid && path !== undefined ? { entry: { path, ...document.entry }, segments: target.segments } : undefined;
  };
  return Object.assign(handler, { plain, catalog, entry });
}

/** The answers for one version of a document: its `200` and `304` when it is valid, else its `422`. */
function answerOf(path: string, bytes: Uint8Array, handlers: HandlerRegistry): DocumentAnswer {
  const tag = entityTag(bytes);
  const validation = validateDocument(path, bytes, handlers);
  if (!validation.ok) {
    const count = validation.problems.length;
    const message = `The Request document ${path} is invalid (${count} ${count === 1 ? 'problem' : 'problems'}).`;
    return { valid: false, invalid: jsonReply(422, { error: { code: 'invalid_request', message, problems: validation.problems } }) };
  }
  return {
    valid: true,
    tag,
    entry: validation.entry,
    ok: reply(200, { ...cacheHeaders(tag), 'content-type': JSON_TYPE }, bytes),
    notModified: reply(304, cacheHeaders(tag)),
  };
}

/** What a `200` or `304` of a document or the catalog carries besides its body. */
function cacheHeaders(tag: string): Record<string, string> {
  return { etag: tag, 'cache-control': 'no-cache' };
}

/** A reply with every header it is sent with: `nosniff` always (SERVE-8), `content-length` when it has a body. */
function reply(status: number, headers: Record<string, string>, body?: Uint8Array): PlainReply {
  const all: Record<string, string> = { 'x-content-type-options': 'nosniff', ...headers };
  if (body !== undefined) all['content-length'] = String(body.byteLength);
  return { status, headers: Object.freeze(all), body };
}

/** A JSON reply that is never cached by clients: errors and verdicts (the A2A face answers with it too). */
export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}): PlainReply {
  return reply(status, { 'content-type': JSON_TYPE, 'cache-control': 'no-cache', ...headers }, jsonBytes(value));
}

function notFound(): PlainReply {
  // The message never echoes the path: it is in the client's hands already, and nothing about the disk is told.
  return jsonReply(404, { error: { code: 'not_found', message: 'No Request document is served at this path.' } });
}

function jsonBytes(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value, null, 2)}\n`);
}

/** The path to judge: the target without its query or fragment. */
export function pathOfTarget(target: string): string {
  const query = target.indexOf('?');
  const fragment = target.indexOf('#');
  const end = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment);
  return end < 0 ? target : target.slice(0, end);
}

/** The path as one log token: no spaces or control characters, bounded length. */
export function printable(path: string): string {
  const escaped = PLAIN_LOG_TOKEN.test(path)
    ? path
    : path.replace(/[^\x21-\x7e]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return escaped.length > MAX_LOGGED_PATH ? `${escaped.slice(0, MAX_LOGGED_PATH)}...` : escaped;
}
