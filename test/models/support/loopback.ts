/** A scripted HTTP server on 127.0.0.1 (ephemeral port) for provider tests: each request takes the next handler. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the server received, body parsed as JSON. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: the parsed JSON body of a wire request, read freely by each test.
  body: any;
  /** Resolves when the client goes away before the response ended (abort). */
  closed: Promise<void>;
}

/** Answers one request. */
export type Handler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

/** A running loopback server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts a server; the n-th request is answered by `handlers[n]` (the last handler answers any extra). */
export async function startServer(handlers: Handler[]): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const closed = new Promise<void>((resolve) =>
        response.on('close', () => {
          if (!response.writableEnded) resolve();
        }),
      );
      const request: ReceivedRequest = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: incoming.headers,
        body: text ? JSON.parse(text) : undefined,
        closed,
      };
      const handler = handlers[Math.min(requests.length, handlers.length - 1)];
      requests.push(request);
      Promise.resolve(handler?.(request, response)).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers requests for `path` with `answer`, and redirects every other request there with `status` (307, 308). */
export function redirectsTo(path: string, status: number, answer: Handler): Handler {
  return (request, response) => {
    if (request.path === path) return answer(request, response);
    response.writeHead(status, { location: path });
    response.end();
  };
}

/** Answers with JSON. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
}

/** Cuts the connection without answering. */
export function reset(): Handler {
  return (_, response) => {
    response.socket?.destroy();
  };
}

/** Never answers — no status line, no headers — until the client goes away. */
export function stall(): Handler {
  return async (request) => {
    await request.closed;
  };
}

/** Sends the first `count` events of a stream, then cuts the connection. */
export function cutAfter(events: string[], count: number): Handler {
  return async (_, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events.slice(0, count)) response.write(event);
    await new Promise((resolve) => setTimeout(resolve, 20));
    response.socket?.destroy();
  };
}

/**
 * How many requests reached the server, once the client has left each of them (a hang here is a
 * leaked connection). A model deadline also covers sending (MODEL-2), so on a loaded machine an
 * attempt, the first above all (it pays for the fetch client's lazy start), can time out before
 * its bytes arrive: against stall() this is only an upper bound on the attempts, which the
 * provider's error and retries count.
 */
export async function requestsLeft(server: LoopbackServer): Promise<number> {
  await Promise.all(server.requests.map((request) => request.closed));
  return server.requests.length;
}

/** A promise with its resolver, for servers that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Resolves `true` when `promise` settles first, `false` after `ms`. */
export function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

/** What a streaming handler may do between chunks. */
export interface StreamScript {
  /** After this many events, wait for `hold` before sending the rest (to prove the client streams). */
  holdAfter?: number;
  hold?: Promise<unknown>;
  /** How long to wait for `hold` before giving up (the result lands in `held`). */
  holdTimeoutMs?: number;
  /** Set to whether `hold` settled in time. */
  held?: { value: boolean | undefined };
  /** Stop after `holdAfter` events and keep the connection open until the client leaves. */
  hang?: boolean;
}

/** Sends SSE events (each already `event:`/`data:` text) with the script's pauses. */
export function sse(events: string[], script: StreamScript = {}): Handler {
  return async (request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const [index, event] of events.entries()) {
      if (index === script.holdAfter) {
        if (script.hang) {
          await request.closed;
          return;
        }
        const settled = await within(script.hold ?? Promise.resolve(), script.holdTimeoutMs ?? 2_000);
        if (script.held) script.held.value = settled;
      }
      response.write(event);
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  };
}

/** Splits text into pieces of at most `size` characters. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}
