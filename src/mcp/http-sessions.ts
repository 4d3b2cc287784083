/** `delegate-mcp --http` (MCP-14 to MCP-17): a `fetch`-style handler speaking Streamable HTTP at `/mcp`, one SDK server and transport per client session, sessions bounded in number and idle time. */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { DEFAULT_MAX_REQUEST_BODY_SIZE, readRequestBody, requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type CancelledNotification, isInitializeRequest, isJSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from '../protocol/json.js';

/** The path the MCP endpoint answers at. */
export const MCP_PATH = '/mcp';
/** How long a session may stay idle before it is closed, by default (MCP-16): 15 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;
/** How many sessions may be open at once, by default (MCP-16). */
export const DEFAULT_MAX_SESSIONS = 1000;

/** The longest delay a Node timer takes (about 24.8 days). */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** JSON-RPC error codes the handler answers with outside the SDK's transport. */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;

/** A JSON-RPC error answer outside any session. */
function rpcError(status: number, message: string, code = SERVER_ERROR): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** Bounds of the sessions (MCP-16). */
export interface McpHttpOptions {
  /** How long a session may go with no request open before it is closed, in ms (default {@link DEFAULT_SESSION_IDLE_MS}). */
  idleMs?: number;
  /** How many sessions may be open at once (default {@link DEFAULT_MAX_SESSIONS}). */
  maxSessions?: number;
}

/** The handler and what closes every session it opened. */
export interface McpHttpHandler {
  handle(request: Request): Promise<Response>;
  /** How many client sessions are open, for tests and diagnostics. */
  sessions(): number;
  close(): Promise<void>;
}

/** One client session: its server and transport, and its HTTP requests not yet answered in full. */
interface Session {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  /** Requests of the session whose answer is still going out: a call in flight, a stream held open. */
  open: number;
  /** Closes the session once it has been idle for the idle time (MCP-16). */
  timer: NodeJS.Timeout;
}

/** A POST's JSON-RPC messages, or the answer refusing its body (too large, not JSON). */
type ReadBody = { ok: true; value: unknown } | { ok: false; response: Response };

/** Reads a POST's body as the SDK's transport would, with its size limit, parsed safely. */
async function readBody(request: Request): Promise<ReadBody> {
  const body = await readRequestBody(request, DEFAULT_MAX_REQUEST_BODY_SIZE).catch(() => undefined);
  if (body === undefined) return { ok: false, response: rpcError(400, 'Parse error: the request body could not be read.', PARSE_ERROR) };
  if (body.tooLarge) return { ok: false, response: rpcError(413, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE)) };
  const parsed = parseJson(body.text);
  return parsed.ok ? parsed : { ok: false, response: rpcError(400, `Parse error: ${parsed.message}`, PARSE_ERROR) };
}

/** The messages of a body: one, or a batch's. */
function messagesOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/**
 * The same response, calling `done` once when its body has gone out in full or the client went
 * away before that (the request's signal, MCP-17); at once for a response without a body.
 */
function whenAnswered(response: Response, signal: AbortSignal, done: () => void): Response {
  let called = false;
  const finish = () => {
    if (called) return;
    called = true;
    signal.removeEventListener('abort', finish);
    done();
  };
  if (response.body === null || signal.aborted) {
    finish();
    return response;
  }
  signal.addEventListener('abort', finish, { once: true });
  const body = response.body.pipeThrough(new TransformStream({ flush: finish }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Creates the Streamable HTTP handler (MCP-14 to MCP-17). Only an `initialize` POST without a
 * session id opens a session: a new server from `createServer`, connected to its own transport,
 * and closed again if the transport refuses the request; any other request without a session id
 * is refused with `400` and keeps nothing (MCP-15). A request with a session id goes to its
 * session, an unknown session answers `404`, another path `404`. A session idle for `idleMs` is
 * closed, and past `maxSessions` the least recently used idle session is closed to make room, or
 * the `initialize` is refused with `503` when none is idle (MCP-16). A client that goes away
 * before a POST is answered cancels the calls it carried (MCP-17). The SDK's transport does the rest.
 */
export function createMcpHttpHandler(createServer: () => Server, options: McpHttpOptions = {}): McpHttpHandler {
  // A timer longer than Node's longest would fire at once: past it, a session waits the longest a timer can.
  const idleMs = Math.min(options.idleMs ?? DEFAULT_SESSION_IDLE_MS, LONGEST_TIMER_MS);
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  // In least recently used order: a session is moved to the end whenever one of its requests ends.
  const sessions = new Map<string, Session>();
  let opening = 0;
  let closed = false;

  /** Closes a session: its transport, and so the calls in flight (their runs cancelled, MCP-11) and its streams. */
  const end = (session: Session) => {
    clearTimeout(session.timer);
    return session.server.close().catch(() => undefined);
  };

  /** A request of the session ended: once none is open, the session is idle from now. */
  const ended = (id: string, session: Session) => {
    session.open -= 1;
    if (sessions.get(id) !== session) return;
    sessions.delete(id);
    sessions.set(id, session);
    if (session.open === 0) session.timer.refresh();
  };

  /** Makes room for one more session (MCP-16): false when the sessions at the limit are all busy. */
  const roomForOne = () => {
    if (sessions.size + opening < maxSessions) return true;
    for (const [id, session] of sessions) {
      if (session.open > 0) continue;
      // Out of the count now, not when the transport says it closed: two initialize requests at once never take the same room.
      sessions.delete(id);
      void end(session);
      return true;
    }
    return false;
  };

  /** Hands a request to its session's transport; a POST's calls are cancelled if its client goes away first (MCP-17). */
  const exchange = async (id: string, session: Session, request: Request): Promise<Response> => {
    session.open += 1;
    const done = () => ended(id, session);
    let response: Response;
    try {
      if (request.method !== 'POST') response = await session.transport.handleRequest(request);
      else {
        const body = await readBody(request);
        if (!body.ok) response = body.response;
        else {
          response = await session.transport.handleRequest(request, { parsedBody: body.value });
          cancelOnDisconnect(session.transport, messagesOf(body.value), request.signal);
        }
      }
    } catch (error) {
      done();
      throw error;
    }
    return whenAnswered(response, request.signal, done);
  };

  /** Opens a session for an `initialize` POST (MCP-15, MCP-16). */
  const open = async (request: Request): Promise<Response> => {
    const body = await readBody(request);
    if (!body.ok) return body.response;
    if (!messagesOf(body.value).some((message) => isInitializeRequest(message)))
      return rpcError(400, 'Bad Request: Mcp-Session-Id header is required; only an initialize request starts a session.');
    if (closed) return rpcError(503, 'delegate-mcp is stopping and opens no new session.');
    if (!roomForOne())
      return rpcError(
        503,
        `delegate-mcp has ${maxSessions} sessions open, each answering a request: its limit (--max-sessions). End a session (DELETE) or try again later.`,
      );
    opening += 1;
    let id: string | undefined;
    let session: Session | undefined;
    const server = createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (initialized) => {
        id = initialized;
        const timer = setTimeout(() => {
          if (session && session.open === 0) void end(session);
        }, idleMs);
        timer.unref();
        // The initialize request itself is open until its answer has gone out.
        session = { server, transport, open: 1, timer };
        sessions.set(initialized, session);
      },
    });
    // Set before connecting: the server chains its own close handling after this one.
    transport.onclose = () => {
      if (session === undefined || id === undefined) return;
      clearTimeout(session.timer);
      if (sessions.get(id) === session) sessions.delete(id);
    };
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(request, { parsedBody: body.value });
    } catch (error) {
      if (session && id !== undefined) ended(id, session);
      await server.close().catch(() => undefined);
      throw error;
    } finally {
      opening -= 1;
    }
    // Refused by the transport (a bad header, a second initialize in a batch): nothing is kept (MCP-15).
    if (session === undefined || id === undefined) {
      await server.close().catch(() => undefined);
      return response;
    }
    const [opened, openedId] = [session, id];
    return whenAnswered(response, request.signal, () => ended(openedId, opened));
  };

  return {
    async handle(request) {
      if (new URL(request.url).pathname !== MCP_PATH) return rpcError(404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const session = sessions.get(id);
        return session ? exchange(id, session, request) : rpcError(404, `There is no session "${id}"; start a new one.`);
      }
      if (request.method !== 'POST') return rpcError(400, 'Bad Request: Mcp-Session-Id header is required; only an initialize request starts a session.');
      return open(request);
    },
    sessions() {
      return sessions.size;
    },
    async close() {
      closed = true;
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map(end));
    },
  };
}

/**
 * Cancels the requests among `messages` when `signal` aborts, the client having gone away before
 * their answers went out (MCP-17): each is told to the session's server as the client's own
 * `notifications/cancelled` would be, so it reaches the run tree the same way (MCP-11). A request
 * already answered is no longer known to the server, and its cancellation does nothing.
 */
function cancelOnDisconnect(transport: WebStandardStreamableHTTPServerTransport, messages: unknown[], signal: AbortSignal): void {
  const requests: RequestId[] = messages.filter((message) => isJSONRPCRequest(message)).map((message) => message.id);
  if (requests.length === 0) return;
  const cancel = () => {
    for (const requestId of requests) {
      const notification: CancelledNotification & { jsonrpc: '2.0' } = {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'The client went away before the answer.' },
      };
      transport.onmessage?.(notification);
    }
  };
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
}
