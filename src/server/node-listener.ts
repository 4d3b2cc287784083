/** A thin adapter hosting a `fetch`-style handler on `node:http`, with graceful close. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ConnectionInfo } from './handler.js';
import type { PlainHandler, PlainReply } from './plain-exchange.js';

/** Bodies up to this many bytes with a `content-length` are written whole rather than streamed. */
const WHOLE_BODY_BYTES = 1024 * 1024;

/**
 * A handler the listener can host: a `Request` (plus transport facts) in, a `Response` out. One
 * that also offers `plain` answers GET and HEAD without web objects (SERVE-12).
 */
export type FetchHandler = ((request: Request, info: ConnectionInfo) => Response | Promise<Response>) & { plain?: PlainHandler };

/** Where to listen. */
export interface ServeOptions {
  /** TCP port; `0` picks a free one (default 8787). */
  port?: number;
  /** Interface to bind (default `127.0.0.1`). */
  host?: string;
}

/** A listening server. */
export interface RunningServer {
  /** The origin clients use, e.g. `http://127.0.0.1:8787` (no trailing slash; the real port). */
  url: string;
  /** The port actually bound (useful after `port: 0`). */
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (their connections are then
   * closed), closes idle keep-alive connections at once, and resolves when every connection is
   * gone. `force: true` also cuts connections still busy. Calling it again returns the same promise.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

/**
 * Serves `handler` over HTTP/1.1 on `options.host:options.port`. Each Node request becomes a
 * `Request` (URL built from the bound address and the raw target, never from the `Host` header;
 * the body streamed for methods that have one; a signal aborted if the client goes away) and the
 * handler's `Response` is written back with its status and headers, its body streamed with
 * backpressure, and no body for `HEAD`, `204` and `304`. A target that cannot be a URL, or a
 * method `Request` refuses to carry (TRACE, TRACK), answers `400` without reaching the handler.
 * When the handler offers `plain`, a GET or HEAD in origin-form goes to it instead and its reply is
 * written as it is: no `Request`, `Headers`, `AbortSignal` or `Response` per request (SERVE-12).
 */
export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  let closing = false;
  let origin = '';
  const plain = handler.plain;
  const server = createServer((incoming, outgoing) => {
    outgoing.once('close', () => {
      // Once closing, a connection whose request just finished is idle: let it go (after Node marks it idle).
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    const method = incoming.method;
    if (plain !== undefined && (method === 'GET' || method === 'HEAD') && incoming.url?.startsWith('/')) {
      void respondPlain(plain, incoming, outgoing, () => closing);
    } else {
      void respond(handler, incoming, outgoing, origin, () => closing);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  origin = `http://${shownHost}:${address.port}`;
  let closed: Promise<void> | undefined;
  return {
    url: origin,
    port: address.port,
    close(closeOptions = {}) {
      if (closed === undefined) {
        closing = true;
        closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
        server.closeIdleConnections();
      }
      if (closeOptions.force) server.closeAllConnections();
      return closed;
    },
  };
}

async function respond(handler: FetchHandler, incoming: IncomingMessage, outgoing: ServerResponse, origin: string, isClosing: () => boolean): Promise<void> {
  const controller = new AbortController();
  outgoing.on('close', () => {
    if (!outgoing.writableFinished) controller.abort();
  });
  const request = toRequest(incoming, origin, controller.signal);
  if (request === undefined) {
    outgoing.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    outgoing.end('Bad Request\n');
    return;
  }
  let response: Response;
  try {
    response = await handler(request, { remoteAddress: incoming.socket.remoteAddress, rawTarget: incoming.url });
  } catch {
    if (!outgoing.headersSent) {
      outgoing.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      outgoing.end('Internal Server Error\n');
    } else {
      outgoing.destroy();
    }
    return;
  }
  await writeResponse(response, incoming, outgoing, isClosing());
}

/**
 * The fast path for a GET or HEAD whose target starts with `/`: its facts handed to `plain`, the
 * reply written in one piece. Such a target always makes a URL after the origin (past the
 * authority, WHATWG URL parsing never fails), so the `400` of `toRequest` cannot apply here.
 */
async function respondPlain(plain: PlainHandler, incoming: IncomingMessage, outgoing: ServerResponse, isClosing: () => boolean): Promise<void> {
  const target = incoming.url as string;
  const ifNoneMatch = incoming.headers['if-none-match'];
  let reply: PlainReply;
  try {
    reply = await plain({ method: incoming.method as string, target, ifNoneMatch: ifNoneMatch ?? null, remoteAddress: incoming.socket.remoteAddress });
  } catch {
    outgoing.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    outgoing.end('Internal Server Error\n');
    return;
  }
  writePlainReply(reply, incoming, outgoing, isClosing());
}

function writePlainReply(reply: PlainReply, incoming: IncomingMessage, outgoing: ServerResponse, closing: boolean): void {
  // While closing, tell keep-alive clients this connection ends with this response.
  outgoing.writeHead(reply.status, closing ? { ...reply.headers, connection: 'close' } : reply.headers);
  const bodyless = incoming.method === 'HEAD' || reply.status === 204 || reply.status === 304;
  outgoing.end(bodyless ? undefined : reply.body);
}

function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Request | undefined {
  const target = incoming.url ?? '/';
  const method = incoming.method ?? 'GET';
  try {
    // Concatenation, not `new URL(target, origin)`: a target like `//host/x` must stay a path.
    const url = target.startsWith('/') ? new URL(origin + target) : new URL(target);
    const headers = new Headers();
    for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2) {
      headers.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string);
    }
    const init: RequestInit = { method, headers, signal };
    if (method !== 'GET' && method !== 'HEAD') {
      init.body = Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>;
      init.duplex = 'half';
    }
    return new Request(url, init);
  } catch {
    return undefined;
  }
}

async function writeResponse(response: Response, incoming: IncomingMessage, outgoing: ServerResponse, closing: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  // While closing, tell keep-alive clients this connection ends with this response.
  if (closing) headers.connection = 'close';
  outgoing.writeHead(response.status, headers);
  const bodyless = incoming.method === 'HEAD' || response.status === 204 || response.status === 304;
  if (response.body === null || bodyless) {
    await response.body?.cancel().catch(() => undefined);
    outgoing.end();
    return;
  }
  try {
    // A body of a known, small length (every document and error this server answers) is written in
    // one piece: streaming it chunk by chunk through a pipeline cost more than the file read.
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (length <= WHOLE_BODY_BYTES) {
      outgoing.end(new Uint8Array(await response.arrayBuffer()));
      return;
    }
    // An event stream's first event may be long in coming (MCP-14): its client is told at once that it is open.
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) outgoing.flushHeaders();
    await pipeline(Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>), outgoing);
  } catch {
    // The client went away or the body failed midway: nothing more can be said on this connection.
    outgoing.destroy();
  }
}
