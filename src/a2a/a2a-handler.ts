/** The A2A face of `delegate-serve --a2a` (A2A-1 to A2A-3, A2A-10): cards and their list for GET, the SDK's JSON-RPC transport (SSE for streams) for POST. */
import { join } from 'node:path';
import { A2A_VERSION_HEADER, formatSSEErrorEvent, formatSSEEvent, HTTP_EXTENSION_HEADER, SSE_HEADERS } from '@a2a-js/sdk';
import { LEGACY_HTTP_EXTENSION_HEADER } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  validateVersion,
} from '@a2a-js/sdk/server';
import { type ConnectionInfo, jsonReply, pathOfTarget, printable, type RequestHandler } from '../server/handler.js';
import type { FetchHandler } from '../server/node-listener.js';
import type { PlainHandler, PlainReply, PlainRequest } from '../server/plain-exchange.js';
import type { CatalogEntry } from '../server/validate-document.js';
import { parseJson } from '../protocol/json.js';
import { BoundedTaskStore } from './bounded-task-store.js';
import { A2A_PREFIX, agentCardOf, CARD_PATH } from './served-card.js';
import { RequestExecutor, type RequestRunner, type ServedRequest } from './request-executor.js';

/** The largest JSON-RPC request body taken, in bytes; a longer one answers `413` (A2A-3). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The protocol version a request without an `A2A-Version` header speaks, as the SDK's transports assume (A2A-10). */
const LEGACY_VERSION = '0.3';
/** The JSON-RPC code of a fault on the server's side. */
const INTERNAL_ERROR = -32603;
const encoder = new TextEncoder();

/** Options of {@link createA2aHandler}. */
export interface A2aHandlerOptions {
  /** The document handler of the same folder: its catalog and its confined look-ups are the agents' (A2A-1). */
  documents: Pick<RequestHandler, 'catalog' | 'entry'>;
  /** The served folder (absolute): where a Request's file is for its runs. */
  root: string;
  /** Runs one Request for a task. */
  run: RequestRunner;
  /** The origin clients reach the server at, e.g. `http://127.0.0.1:8787`, known once it listens (A2A-2). */
  origin: () => string;
  /** The agents' version on their cards: the package's. */
  version: string;
  /** Receives one access-log line per request. */
  log: (line: string) => void;
  /** Receives unexpected errors behind a `500` answer. */
  onError: (error: unknown) => void;
}

/** The A2A handler: `plain` answers GET and HEAD, `fetch` the JSON-RPC POSTs, `close` cancels every task's run. */
export interface A2aHandler {
  plain: PlainHandler;
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /** Cancels the runs of every live task (A2A-9), as stopping the server does. */
  close(): void;
}

/** Whether a URL path is the A2A face's: `/a2a` or below it (A2A-1). */
export function isA2aPath(pathname: string): boolean {
  return pathname === A2A_PREFIX || pathname.startsWith(`${A2A_PREFIX}/`);
}

/**
 * The document handler with the A2A face beside it (A2A-1): targets at `/a2a` and below go to the
 * A2A handler, every other one to the documents, for GET and HEAD on the plain path (SERVE-12) too.
 */
export function withA2a(documents: RequestHandler, a2a: A2aHandler): FetchHandler {
  const handler = (request: Request, info: ConnectionInfo) => {
    const target = info.rawTarget?.startsWith('/') ? info.rawTarget : new URL(request.url).pathname;
    return isA2aPath(pathOfTarget(target)) ? a2a.fetch(request, info) : documents(request, info);
  };
  return Object.assign(handler, {
    plain: (request: PlainRequest) => (isA2aPath(pathOfTarget(request.target)) ? a2a.plain(request) : documents.plain(request)),
  });
}

/** One agent: its executor, task store and event buses, kept while its document changes, and the SDK's handlers for its current card. */
interface Agent {
  served: ServedRequest;
  executor: RequestExecutor;
  store: BoundedTaskStore;
  buses: DefaultExecutionEventBusManager;
  cardText: string;
  transport: JsonRpcTransportHandler;
  legacy: LegacyJsonRpcTransportHandler;
}

/**
 * Creates the A2A face of a served folder (A2A-1): each valid Request `<path>.json` is an agent at
 * `/a2a/<path>` whose card is at `/a2a/<path>/.well-known/agent-card.json` (A2A-2), `/a2a/` lists
 * every card, and a POST to an agent's URL is JSON-RPC answered by the SDK's
 * `JsonRpcTransportHandler` over a `DefaultRequestHandler` (or the SDK's 0.3 transport for a
 * request that asks for 0.3 or names no version, A2A-10), streams as server-sent events (A2A-3).
 * Every request looks the document up as a GET of it would (SERVE-6, SERVE-11): nothing outside
 * the folder, no dotfiles, no invalid documents.
 */
export function createA2aHandler(options: A2aHandlerOptions): A2aHandler {
  const agents = new Map<string, Agent>();

  /** The agent whose path below `/a2a` is `agentPath` (still percent-encoded), its card brought up to date; undefined when no valid Request is there. */
  const agentAt = async (agentPath: string): Promise<{ agent: Agent; card: ReturnType<typeof agentCardOf> } | undefined> => {
    const found = await options.documents.entry(`${agentPath}.json`);
    if (found === undefined) return undefined;
    const card = agentCardOf(found.entry, options.origin(), options.version);
    const cardText = JSON.stringify(card);
    const served = { reference: join(options.root, ...found.segments), entry: found.entry };
    let agent = agents.get(found.entry.path);
    if (agent === undefined) {
      // Finished tasks are kept for GetTask up to a bound, not for the life of the server (A2A-12).
      const store = new BoundedTaskStore();
      const buses = new DefaultExecutionEventBusManager();
      const executor = new RequestExecutor(() => (agents.get(found.entry.path) as Agent).served, options.run);
      agent = { served, executor, store, buses, cardText: '', ...transportsFor(card, store, executor, buses) };
      agents.set(found.entry.path, agent);
    }
    agent.served = served;
    if (agent.cardText !== cardText) {
      // The document changed: the card the SDK answers with changes, the tasks and their runs stay.
      Object.assign(agent, transportsFor(card, agent.store, agent.executor, agent.buses), { cardText });
    }
    return { agent, card };
  };

  const plain: PlainHandler = async (request) => {
    const started = performance.now();
    const pathname = pathOfTarget(request.target);
    let reply: PlainReply;
    try {
      reply = await answerGet(request.method, pathname);
    } catch (error) {
      options.onError(error);
      reply = jsonReply(500, { error: { code: 'internal_error', message: 'The server failed to answer this request.' } });
    }
    const bytes = request.method === 'HEAD' ? 0 : (reply.body?.byteLength ?? 0);
    options.log(
      `${request.remoteAddress ?? '-'} ${request.method} ${printable(pathname)} ${reply.status} ${bytes}B ${Math.round(performance.now() - started)}ms`,
    );
    return reply;
  };

  const answerGet = async (method: string, pathname: string): Promise<PlainReply> => {
    if (method !== 'GET' && method !== 'HEAD')
      return jsonReply(405, { error: { code: 'method_not_allowed', message: `Expected GET or HEAD, got ${method}.` } }, { allow: 'GET, HEAD' });
    if (pathname === A2A_PREFIX || pathname === `${A2A_PREFIX}/`) {
      // The list of every agent's card, sorted by path (A2A-2).
      const cards = await Promise.all((await options.documents.catalog()).map((entry: CatalogEntry) => agentCardOf(entry, options.origin(), options.version)));
      return jsonReply(200, cards);
    }
    if (pathname.endsWith(CARD_PATH)) {
      const found = await agentAt(pathname.slice(A2A_PREFIX.length, -CARD_PATH.length));
      return found === undefined ? NOT_FOUND : jsonReply(200, found.card);
    }
    const found = await agentAt(agentPathOf(pathname));
    if (found === undefined) return NOT_FOUND;
    return jsonReply(
      405,
      { error: { code: 'method_not_allowed', message: 'An agent takes JSON-RPC requests by POST; its card is at .well-known/agent-card.json below it.' } },
      { allow: 'POST' },
    );
  };

  const fetch = async (request: Request, info: ConnectionInfo = {}): Promise<Response> => {
    const started = performance.now();
    const remoteAddress = info.remoteAddress;
    // Judged as sent (SERVE-7): the raw target when the transport gave one.
    const pathname = pathOfTarget(info.rawTarget?.startsWith('/') ? info.rawTarget : new URL(request.url).pathname);
    let response: Response;
    let method = '-';
    try {
      if (request.method !== 'POST') {
        const reply = await plain({ method: request.method, target: pathname, ifNoneMatch: null, remoteAddress });
        return new Response(reply.body ?? null, { status: reply.status, headers: reply.headers });
      }
      const found = pathname.endsWith(CARD_PATH) ? undefined : await agentAt(agentPathOf(pathname));
      if (found === undefined) response = toResponse(NOT_FOUND);
      else {
        const body = await boundedText(request);
        if (body === undefined) {
          response = toResponse(
            jsonReply(413, { error: { code: 'payload_too_large', message: `Expected a JSON-RPC request of at most ${MAX_BODY_BYTES} bytes.` } }),
          );
        } else {
          method = jsonRpcMethod(body);
          response = await jsonRpc(found.agent, found.card, request, body);
        }
      }
    } catch (error) {
      options.onError(error);
      response = toResponse(jsonReply(500, { error: { code: 'internal_error', message: 'The server failed to answer this request.' } }));
    }
    options.log(`${remoteAddress ?? '-'} POST ${printable(pathname)} ${response.status} ${method} ${Math.round(performance.now() - started)}ms`);
    return response;
  };

  return {
    plain,
    fetch,
    close() {
      for (const agent of agents.values()) agent.executor.cancelAll();
    },
  };
}

/** The SDK's request handler over an agent's card, store, executor and buses, and its JSON-RPC transports (1.0 and 0.3). */
function transportsFor(card: ReturnType<typeof agentCardOf>, store: BoundedTaskStore, executor: RequestExecutor, buses: DefaultExecutionEventBusManager) {
  const handler = new DefaultRequestHandler(card, store, executor, buses);
  return { transport: new JsonRpcTransportHandler(handler), legacy: new LegacyJsonRpcTransportHandler(handler) };
}

/**
 * One JSON-RPC request to an agent, as the SDK's own Express binding answers it (A2A-3, A2A-10):
 * the version asked for checked against the card, the 0.3 transport when the request asks for 0.3
 * or names no version, a single answer as JSON, a stream as server-sent events (its first event
 * awaited, so an error before it is a plain JSON-RPC error).
 */
async function jsonRpc(agent: Agent, card: ReturnType<typeof agentCardOf>, request: Request, body: string): Promise<Response> {
  const requested = request.headers.get(A2A_VERSION_HEADER) || undefined;
  const useLegacy = (requested ?? LEGACY_VERSION) === LEGACY_VERSION;
  const mapError = useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const id = jsonRpcId(body);
  try {
    const extensions =
      (useLegacy
        ? (request.headers.get(LEGACY_HTTP_EXTENSION_HEADER) ?? request.headers.get(HTTP_EXTENSION_HEADER))
        : request.headers.get(HTTP_EXTENSION_HEADER)) ?? '';
    const context = defaultServerCallContextBuilder({
      extensions: [
        ...new Set(
          extensions
            .split(',')
            .map((uri) => uri.trim())
            .filter((uri) => uri !== ''),
        ),
      ],
      user: new UnauthenticatedUser(),
      headers: Object.fromEntries(request.headers),
      ...(requested === undefined ? {} : { requestedVersion: requested }),
    });
    validateVersion(context.requestedVersion, card, 'JSONRPC');
    const answer = await (useLegacy ? agent.legacy : agent.transport).handle(body, context);
    if (!isAsyncIterable(answer)) return jsonResponse(200, answer);
    const iterator = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (error) {
      return jsonResponse(200, { jsonrpc: '2.0', id, error: mapError(error) });
    }
    return eventStream(first, iterator, request.signal, (error) => ({ jsonrpc: '2.0', id, error: mapError(error) }));
  } catch (error) {
    const mapped = mapError(error);
    return jsonResponse(mapped.code === INTERNAL_ERROR ? 500 : 200, { jsonrpc: '2.0', id, error: mapped });
  }
}

/** A stream's events as server-sent events (A2A-3); a failure midway is an `error` event, and a client that goes away stops the reading (not the task). */
function eventStream(first: IteratorResult<unknown>, iterator: AsyncIterator<unknown>, signal: AbortSignal, failure: (error: unknown) => unknown): Response {
  let sentFirst = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = sentFirst ? await iterator.next() : first;
        sentFirst = true;
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(formatSSEEvent(next.value)));
      } catch (error) {
        controller.enqueue(encoder.encode(formatSSEErrorEvent(failure(error))));
        controller.close();
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  signal.addEventListener('abort', () => void iterator.return?.(), { once: true });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** Reads a request's body as text, at most {@link MAX_BODY_BYTES}; undefined when it is longer. */
async function boundedText(request: Request): Promise<string | undefined> {
  if (request.body === null) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    length += chunk.byteLength;
    if (length > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The agent path below `/a2a` a POST or GET names: the path, without the trailing `/` a card resolver's base URL may end with. */
function agentPathOf(pathname: string): string {
  const path = pathname.slice(A2A_PREFIX.length);
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The field of a JSON-RPC body named `field`, for the log and error envelopes; undefined when the body is not an object. */
function jsonRpcField(body: string, field: 'id' | 'method'): unknown {
  const parsed = parseJson(body);
  return parsed.ok && typeof parsed.value === 'object' && parsed.value !== null ? (parsed.value as Record<string, unknown>)[field] : undefined;
}

/** The id of a JSON-RPC request, or null. */
function jsonRpcId(body: string): string | number | null {
  const id = jsonRpcField(body, 'id');
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The method of a JSON-RPC request as one log token. */
function jsonRpcMethod(body: string): string {
  const method = jsonRpcField(body, 'method');
  return typeof method === 'string' ? printable(method) : '-';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | undefined)?.[Symbol.asyncIterator] === 'function';
}

const NOT_FOUND = jsonReply(404, { error: { code: 'not_found', message: 'No A2A agent is served at this path.' } });

function toResponse(reply: PlainReply): Response {
  return new Response(reply.body ?? null, { status: reply.status, headers: reply.headers });
}

function jsonResponse(status: number, value: unknown): Response {
  return toResponse(jsonReply(status, value));
}
