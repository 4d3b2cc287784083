/** `delegate-mcp --http` (MCP-14): a `fetch`-style handler speaking Streamable HTTP at `/mcp`, one SDK server and transport per client session. */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/** The path the MCP endpoint answers at. */
export const MCP_PATH = '/mcp';

/** A JSON-RPC error answer outside any session. */
function rpcError(status: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** The handler and what closes every session it opened. */
export interface McpHttpHandler {
  handle(request: Request): Promise<Response>;
  /** How many client sessions are open, for tests and diagnostics. */
  sessions(): number;
  close(): Promise<void>;
}

/**
 * Creates the Streamable HTTP handler (MCP-14): a request without a session id opens a session (a
 * new server from `createServer`, connected to its own transport); a request with one goes to its
 * session; an unknown session answers `404`, another path `404`. The SDK's transport does the rest.
 */
export function createMcpHttpHandler(createServer: () => Server): McpHttpHandler {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    async handle(request) {
      if (new URL(request.url).pathname !== MCP_PATH) return rpcError(404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const transport = sessions.get(id);
        return transport ? transport.handleRequest(request) : rpcError(404, `There is no session "${id}"; start a new one.`);
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (session) => void sessions.set(session, transport),
        onsessionclosed: (session) => void sessions.delete(session),
      });
      await createServer().connect(transport);
      return transport.handleRequest(request);
    },
    sessions() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((transport) => transport.close().catch(() => undefined)));
    },
  };
}
