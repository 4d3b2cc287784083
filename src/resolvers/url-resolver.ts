/** The URL resolver: fetches http(s) Request documents with undici under a host allow-list, with limits and an ETag cache. */
import type { Dispatcher } from 'undici';
import { DelegateError, RequestError, type ErrorCode } from '../protocol/errors.js';
import { abortable } from '../protocol/cancellation.js';
import { parseJson } from '../protocol/json.js';
import { HostList } from './host-list.js';
import { splitIntegrity } from './integrity.js';
import { hasScheme, isAnonymousReference, isHttpUrl } from './reference-forms.js';
import type { TraceContext } from '../protocol/trace/trace.js';
import type { CatalogEntry, LocatedRequest, ResolveContext, Resolver } from './resolver.js';

/** Default timeout of each phase of a fetch (connect, headers, idle body), in milliseconds. */
export const DEFAULT_FETCH_TIMEOUT_MS = 10_000;
/** Default cap on a delegate document's size: 1 MiB. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

/** Options of {@link UrlResolver}. */
export interface UrlResolverOptions {
  /** Hosts that may be fetched: `host` (any port) or `host:port` (that port only). Default: none. */
  allowHosts?: readonly string[];
  /** Hosts whose documents are trusted to run local Activities (same matching); they are allowed too. */
  trustHosts?: readonly string[];
  /**
   * Default for the connect, headers and body timeouts (default {@link DEFAULT_FETCH_TIMEOUT_MS}).
   * undici checks the headers and body timeouts on a coarse clock (about half a second), so a
   * timeout fires up to that much later than asked.
   */
  timeoutMs?: number;
  /** Time to open the connection (TCP + TLS). */
  connectTimeoutMs?: number;
  /** Time from sending the request to receiving the response headers. */
  headersTimeoutMs?: number;
  /** Longest pause between two chunks of the body. */
  bodyTimeoutMs?: number;
  /** Bound on the whole fetch, so a server dripping bytes cannot hold it forever (default 3 × `timeoutMs`). */
  totalTimeoutMs?: number;
  /** Largest document accepted, in bytes (default {@link DEFAULT_MAX_BYTES}); larger downloads are aborted. */
  maxBytes?: number;
}

/** Counters of the network work a {@link UrlResolver} has done, for tests and diagnostics. */
export interface UrlResolverStats {
  /** HTTP requests sent. */
  requests: number;
  /** Bodies downloaded (2xx answers read in full). */
  downloads: number;
  /** Conditional requests sent (`If-None-Match` with a cached ETag). */
  revalidations: number;
  /** `304 Not Modified` answers, served from the cache. */
  notModified: number;
  /** Loads that joined a request already in flight for the same URL instead of sending their own. */
  shared: number;
}

interface CacheEntry {
  etag: string;
  bytes: Buffer;
}

/** A failure of one shared fetch; turned into a DelegateError naming each caller's own reference. */
class FetchFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Resolves absolute `http(s)` URLs, and relative references when the referring document came from
 * an `http(s)` URL (`new URL(reference, base)`, so a served Request can reference its siblings).
 *
 * - The host must be on `allowHosts` (or `trustHosts`) before anything is sent; otherwise
 *   `delegate_forbidden`. URLs with credentials (`user:pass@`) are refused as well.
 * - Redirects are never followed: a 3xx answer is `delegate_forbidden` naming where it pointed,
 *   so a redirect can never lead to a host that is not allowed.
 * - 404/410 are `delegate_not_found`; 401/403/451 `delegate_forbidden`; any other non-2xx
 *   `delegate_not_found` with the status in the message and `data.status`. Network failures and
 *   timeouts are `delegate_not_found` too.
 * - The answer must be `application/json` or a `+json` media type and at most `maxBytes` long
 *   (`delegate_forbidden` otherwise; the download is aborted as soon as the cap is passed).
 * - Answers with an ETag are cached in memory per resolver; every later load of the URL revalidates
 *   with `If-None-Match` and reuses the cached bytes on `304`. Answers without an ETag are not
 *   cached. Concurrent loads of one URL share a single request.
 * - `location` is the URL without its fragment; `trusted` is true only for hosts on `trustHosts`.
 */
export class UrlResolver implements Resolver {
  /** The registry name of this resolver. */
  readonly name = 'url';
  /** The reference form this resolver understands, for error messages. */
  readonly form = 'an http(s) URL on an allowed host (or a path relative to a Request loaded from one)';
  /** Counters of requests, downloads and revalidations. */
  readonly stats: UrlResolverStats = { requests: 0, downloads: 0, revalidations: 0, notModified: 0, shared: 0 };
  /** Hosts that may be fetched. */
  readonly allowHosts: HostList;
  /** Hosts whose documents are trusted. */
  readonly trustHosts: HostList;
  private readonly maxBytes: number;
  private readonly timeouts: { connect: number; headers: number; body: number; total: number };
  /** The bound on a whole fetch, in ms: what an A2A agent's requests are bounded by too (DEL-35). */
  get totalTimeoutMs(): number {
    return this.timeouts.total;
  }
  /** The connection pool, made on the first download: undici is loaded only by a run that fetches a URL (CLI-34). */
  private agent: Dispatcher | undefined;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  constructor(options: UrlResolverOptions = {}) {
    this.allowHosts = new HostList(options.allowHosts);
    this.trustHosts = new HostList(options.trustHosts);
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const base = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
    this.timeouts = {
      connect: options.connectTimeoutMs ?? base,
      headers: options.headersTimeoutMs ?? base,
      body: options.bodyTimeoutMs ?? base,
      total: options.totalTimeoutMs ?? 3 * base,
    };
  }

  /** Accepts absolute http(s) URLs, and scheme-less references whose base is an http(s) URL. */
  accepts(reference: string, context: ResolveContext): boolean {
    if (isAnonymousReference(reference)) return false;
    if (isHttpUrl(reference)) return true;
    return isHttpUrl(context.base) && !hasScheme(reference);
  }

  /** Checks the host and fetches (or revalidates) the document. */
  async resolve(reference: string, context: ResolveContext): Promise<LocatedRequest> {
    const { reference: locator } = splitIntegrity(reference);
    const url = this.toUrl(reference, locator, context.base);
    url.hash = '';
    const location = url.href;
    if (!this.allowHosts.matches(url) && !this.trustHosts.matches(url)) {
      throw new DelegateError(
        'delegate_forbidden',
        `Delegate "${reference}" is forbidden: host ${url.host} is not on the allow-list (${this.allowHosts.describe()}); allow it with --allow-host.`,
        { reference, url: location, host: url.host, allowHosts: this.allowHosts.describe() },
      );
    }
    context.signal?.throwIfAborted();
    let bytes: Buffer;
    try {
      bytes = await abortable(this.load(location, context.traceContext), context.signal);
    } catch (error) {
      if (!(error instanceof FetchFailure)) throw error;
      const named = reference === location ? `"${reference}"` : `"${reference}" (${location})`;
      throw new DelegateError(error.code, `Delegate ${named} ${error.message}`, { reference, url: location, ...error.data }, { cause: error.cause });
    }
    return { location, content: bytes, trusted: this.trustHosts.matches(url) };
  }

  /**
   * Reads the `delegate-serve` catalog at `reference` (SERVE-4, WRK-2) under the rules of a
   * document (host allow-list, no redirects, JSON media type, size cap, timeouts, ETag cache): a
   * JSON array of `{path, name}` entries, each path resolved against the catalog's URL.
   * `delegate_not_found` when the answer is not such an array.
   */
  async catalog(reference: string, context: ResolveContext): Promise<CatalogEntry[]> {
    const located = await this.resolve(reference, context);
    const wrong = (what: string): never => {
      throw new DelegateError('delegate_not_found', `The catalog ${located.location} is not a delegate-serve catalog: ${what}.`, { url: located.location });
    };
    let entries: unknown;
    try {
      entries = JSON.parse(Buffer.from(located.content).toString('utf8'));
    } catch {
      return wrong('its answer is not JSON');
    }
    if (!Array.isArray(entries)) return wrong('expected a JSON array of {path, name} entries');
    return entries.map((entry, index) => {
      const { path, name } = (entry ?? {}) as { path?: unknown; name?: unknown };
      if (typeof path !== 'string' || typeof name !== 'string') return wrong(`expected entry ${index} to have a string path and name`);
      return { name, reference: new URL(path, located.location).href };
    });
  }

  /** Forgets every cached document (the next load of each URL downloads again). */
  clearCache(): void {
    this.cache.clear();
  }

  /** Closes the connection pool; the resolver must not be used afterwards. */
  async close(): Promise<void> {
    await this.agent?.close();
  }

  private toUrl(reference: string, locator: string, base: string | undefined): URL {
    let url: URL;
    try {
      if (locator === '') throw new TypeError('the reference is empty');
      url = isHttpUrl(locator) ? new URL(locator) : new URL(locator, base);
    } catch (error) {
      throw new DelegateError(
        'delegate_not_found',
        `Delegate "${reference}" was not found: it is not a valid URL${base ? ` relative to ${base}` : ''} (${(error as Error).message}).`,
        {
          reference,
        },
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new DelegateError('delegate_forbidden', `Delegate "${reference}" is forbidden: it resolves to ${url.href}, which is not an http(s) URL.`, {
        reference,
        url: url.href,
      });
    }
    if (url.username || url.password) {
      throw new DelegateError(
        'delegate_forbidden',
        `Delegate "${reference}" is forbidden: URLs carrying credentials are refused (they would end up in traces).`,
        { reference },
      );
    }
    return url;
  }

  /** Loads the bytes at `location`, joining a request already in flight for it (which carries the first caller's trace context). */
  private load(location: string, traceContext: TraceContext | undefined): Promise<Buffer> {
    const pending = this.inFlight.get(location);
    if (pending) {
      this.stats.shared++;
      return pending;
    }
    const promise = this.fetchBytes(location, traceContext).finally(() => this.inFlight.delete(location));
    this.inFlight.set(location, promise);
    return promise;
  }

  private async fetchBytes(location: string, traceContext: TraceContext | undefined): Promise<Buffer> {
    const cached = this.cache.get(location);
    // The fetch belongs to the delegating call's span: a server that traces joins the run's trace (TEL-6).
    const headers: Record<string, string> = { accept: 'application/json', ...traceContext };
    if (cached) {
      headers['if-none-match'] = cached.etag;
      this.stats.revalidations++;
    }
    this.stats.requests++;
    // The shared request obeys only the resolver's own deadline: one caller giving up must not
    // cancel the download for the others (each caller's own signal is applied in `abortable`).
    const deadline = AbortSignal.timeout(this.timeouts.total);
    try {
      const { Agent, request } = await import('undici');
      this.agent ??= new Agent({ connect: { timeout: this.timeouts.connect }, headersTimeout: this.timeouts.headers, bodyTimeout: this.timeouts.body });
      const response = await request(location, { method: 'GET', headers, dispatcher: this.agent, signal: deadline });
      const { statusCode, body } = response;
      if (statusCode === 304 && cached) {
        await body.dump();
        this.stats.notModified++;
        return cached.bytes;
      }
      if (statusCode === 422) throw await this.invalidDocument(location, body);
      if (statusCode < 200 || statusCode >= 300) {
        await body.dump().catch(() => undefined);
        throw statusFailure(statusCode, header(response.headers, 'location'));
      }
      const contentType = header(response.headers, 'content-type') ?? '';
      if (!isJsonMediaType(contentType)) {
        discard(body);
        throw new FetchFailure(
          'delegate_forbidden',
          `is forbidden: the server answered content-type "${contentType || '(none)'}", expected application/json or a +json type.`,
          {
            contentType,
          },
        );
      }
      const declared = Number(header(response.headers, 'content-length') ?? Number.NaN);
      if (declared > this.maxBytes) {
        discard(body);
        throw this.tooLarge(declared);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          discard(body);
          throw this.tooLarge(size);
        }
        chunks.push(chunk as Buffer);
      }
      const bytes = Buffer.concat(chunks);
      this.stats.downloads++;
      const etag = header(response.headers, 'etag');
      if (etag) this.cache.set(location, { etag, bytes });
      else this.cache.delete(location);
      return bytes;
    } catch (error) {
      if (error instanceof FetchFailure || error instanceof RequestError) throw error;
      throw this.networkFailure(error, deadline.aborted);
    }
  }

  /**
   * A server that validates what it serves (delegate-serve) answers 422 with the document's
   * problems: they become the caller's `invalid_request`, named by this URL and each pointer.
   */
  private async invalidDocument(location: string, body: Dispatcher.ResponseData['body']): Promise<RequestError | FetchFailure> {
    const text = await body.text().catch(() => '');
    const parsed = text.length <= this.maxBytes ? parseJson(text) : undefined;
    const problems = parsed?.ok ? (parsed.value as { error?: { problems?: unknown } }).error?.problems : undefined;
    if (!Array.isArray(problems) || problems.length === 0) return statusFailure(422, undefined);
    return new RequestError(
      problems.map((problem: { pointer?: unknown; message?: unknown; line?: unknown; column?: unknown }) => ({
        document: location,
        pointer: typeof problem.pointer === 'string' ? problem.pointer : '',
        message: typeof problem.message === 'string' ? problem.message : 'The server found this document invalid.',
        ...(typeof problem.line === 'number' ? { line: problem.line, column: typeof problem.column === 'number' ? problem.column : 1 } : {}),
      })),
    );
  }

  private tooLarge(size: number): FetchFailure {
    return new FetchFailure(
      'delegate_forbidden',
      `is forbidden: the document is larger than the size cap of ${this.maxBytes} bytes (at least ${size} bytes); the download was aborted.`,
      {
        maxBytes: this.maxBytes,
      },
    );
  }

  private networkFailure(error: unknown, pastDeadline: boolean): FetchFailure {
    const code = (error as { code?: string }).code;
    let reason: string;
    if (pastDeadline) reason = `the whole fetch took longer than ${this.timeouts.total} ms`;
    else if (code === 'UND_ERR_CONNECT_TIMEOUT') reason = `no connection within ${this.timeouts.connect} ms`;
    else if (code === 'UND_ERR_HEADERS_TIMEOUT') reason = `no response headers within ${this.timeouts.headers} ms`;
    else if (code === 'UND_ERR_BODY_TIMEOUT') reason = `the body stalled for ${this.timeouts.body} ms`;
    else reason = `${(error as Error).message ?? String(error)}${code ? ` (${code})` : ''}`;
    return new FetchFailure('delegate_not_found', `was not found: the fetch failed: ${reason}.`, code ? { networkCode: code } : {}, { cause: error });
  }
}

function statusFailure(status: number, redirect: string | undefined): FetchFailure {
  if (status >= 300 && status < 400) {
    return new FetchFailure(
      'delegate_forbidden',
      `is forbidden: the server answered ${status}${redirect ? ` redirecting to ${redirect}` : ''}; redirects are not followed, reference the final URL instead.`,
      { status, ...(redirect ? { redirect } : {}) },
    );
  }
  if (status === 401 || status === 403 || status === 451) {
    return new FetchFailure('delegate_forbidden', `is forbidden: the server answered ${status}.`, { status });
  }
  return new FetchFailure('delegate_not_found', `was not found: the server answered ${status}.`, { status });
}

/** Stops reading a body; the listener keeps undici's abort error from surfacing as an uncaught exception. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** True for `application/json` and structured-syntax `+json` media types (parameters ignored). */
export function isJsonMediaType(contentType: string): boolean {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
}
