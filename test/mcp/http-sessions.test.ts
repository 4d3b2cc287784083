/** The Streamable HTTP side (MCP-4, MCP-14 to MCP-17): sessions open per client, end with the run tree that opened them, are bounded, and a client that goes away cancels its calls; only /mcp answers. */
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { createMcpHttpHandler, type McpHttpHandler, type McpHttpOptions } from '../../src/mcp/http-sessions.js';
import { folderSource } from '../../src/mcp/request-source.js';
import { RequestTools, type ToolCallRun } from '../../src/mcp/request-server.js';
import { memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';
import type { RunResult } from '../../src/protocol/contracts.js';
import { type RunningServer, serve } from '../../src/server/node-listener.js';
import { tempDir, waitFor } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

let opened: { server: RunningServer; handler: McpHttpHandler; tools: RequestTools } | undefined;

afterEach(async () => {
  await opened?.handler.close();
  await opened?.server.close({ force: true });
  await opened?.tools.close();
  opened = undefined;
});

/** What the `wait` Activity of the served folder saw: started, and whether its call's signal fired. */
interface Waits {
  started: number;
  cancelled: number;
}

/**
 * Serves a folder at a loopback /mcp with two Requests: `echo`, whose runs answer with their input,
 * and `waiter`, whose run calls the `wait` Activity, which waits until its signal fires. Every run
 * ends in `results` with its trace in `events`; `live()` counts the SDK servers built and not closed.
 */
async function serveEcho(options: { stallDelete?: boolean; bounds?: McpHttpOptions } = {}) {
  const root = tempDir();
  writeFileSync(
    join(root, 'echo.json'),
    JSON.stringify({
      meta: { name: 'echo' },
      context: [{ type: 'input', schema: { type: 'object', properties: { word: { type: 'string' } } } }],
      schema: { type: 'string' },
    }),
  );
  writeFileSync(
    join(root, 'waiter.json'),
    JSON.stringify({
      meta: { name: 'waiter' },
      context: [{ type: 'tool', tool: { wait: { type: 'object', properties: { _activity: { const: 'wait' } } } } }],
      schema: { type: 'string' },
    }),
  );
  const waits: Waits = { started: 0, cancelled: 0 };
  const wait = (_call: unknown, _tool: unknown, _context: unknown, environment: { signal: AbortSignal }) =>
    new Promise((_resolve, reject) => {
      waits.started += 1;
      environment.signal.addEventListener('abort', () => {
        waits.cancelled += 1;
        reject(new Error('cancelled'));
      });
    });
  const runtime = createRuntime({ root, activities: { wait } });
  const results: RunResult[] = [];
  const events: TraceEvent[] = [];
  const run = async (request: { reference: string }, input: unknown, call: ToolCallRun): Promise<RunResult> => {
    const word = (input as { word?: string } | undefined)?.word;
    const model = stepModel(
      () => (word === undefined ? { calls: [{ _tool: 'wait' }], output: null } : { calls: [], output: `echo ${word}` }),
      () => ({ calls: [], output: 'waited' }),
    );
    const sink = memorySink();
    call.tracer.subscribe(sink);
    const result = await runtime.run(await runtime.load(request.reference), { model, input, signal: call.signal, tracer: call.tracer });
    results.push(result);
    events.push(...sink.events);
    return result;
  };
  const tools = new RequestTools({ source: folderSource(root), run });
  let built = 0;
  let closed = 0;
  const handler = createMcpHttpHandler(() => {
    const server = tools.createServer();
    built += 1;
    const forget = server.onclose;
    server.onclose = () => {
      forget?.();
      closed += 1;
    };
    return server;
  }, options.bounds);
  // A server that stalls at the end of a session: it takes the DELETE and never answers it.
  const stalled = (request: Request) => (options.stallDelete && request.method === 'DELETE' ? new Promise<Response>(() => undefined) : handler.handle(request));
  const server = await serve(stalled, { port: 0, host: '127.0.0.1' });
  opened = { server, handler, tools };
  return { url: `${server.url}/mcp`, handler, origin: server.url, waits, results, events, live: () => built - closed };
}

/** The headers of a raw MCP POST, with the session's id when there is one. */
function postHeaders(session?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }),
  };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw client', version: '1' } },
};

/** Opens a session with a raw `initialize` POST and `notifications/initialized`, holding nothing open; resolves with its id. */
async function initialize(url: string): Promise<string> {
  const answer = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INITIALIZE) });
  expect(answer.status).toBe(200);
  await answer.text();
  const session = answer.headers.get('mcp-session-id') as string;
  const initialized = await fetch(url, {
    method: 'POST',
    headers: postHeaders(session),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return session;
}

/** Lists the tools in a session with a raw POST; resolves with the HTTP status. */
async function listStatus(url: string, session: string): Promise<number> {
  const answer = await fetch(url, { method: 'POST', headers: postHeaders(session), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  await answer.text();
  return answer.status;
}

describe('Streamable HTTP sessions (MCP-4, MCP-14)', () => {
  it("a Request's url toolset opens one session for its run tree and ends it when the tree ends", async () => {
    const { url, handler } = await serveEcho();
    const runtime = createRuntime({ root: tempDir() });
    const model = stepModel(
      () => ({ calls: [{ _tool: 'echo', word: 'hi' }], output: null }),
      () => ({ calls: [], output: 'done' }),
    );
    let during = -1;
    runtime.onTreeEnd(() => {
      // Hooks run in order: the MCP connections (registered by createRuntime) have been closed by now.
      during = handler.sessions();
    });
    const document = { context: [{ type: 'toolset', toolset: 'mcp', url }], schema: { type: 'string' } };
    const result = await runtime.run(document, { model });
    expect(result).toMatchObject({ ok: true, output: 'done' });
    expect(during).toBe(0);
  });

  it('ends the tree when the server never answers the end of its session: the run returns within seconds (MCP-4)', async () => {
    const { url } = await serveEcho({ stallDelete: true });
    const runtime = createRuntime({ root: tempDir() });
    const model = stepModel(
      () => ({ calls: [{ _tool: 'echo', word: 'hi' }], output: null }),
      () => ({ calls: [], output: 'done' }),
    );
    const started = Date.now();
    const result = await runtime.run({ context: [{ type: 'toolset', toolset: 'mcp', url }], schema: { type: 'string' } }, { model });
    expect(result).toMatchObject({ ok: true, output: 'done' });
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('keeps the session while the tree runs, and answers only at /mcp', async () => {
    const { url, handler, origin } = await serveEcho();
    const runtime = createRuntime({ root: tempDir() });
    let open = -1;
    const model = stepModel(
      () => ({ calls: [{ _tool: 'echo', word: 'hi' }], output: null }),
      () => {
        open = handler.sessions();
        return { calls: [], output: 'done' };
      },
    );
    await runtime.run({ context: [{ type: 'toolset', toolset: 'mcp', url }], schema: { type: 'string' } }, { model });
    expect(open).toBe(1);
    expect((await fetch(`${origin}/other`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(url, { method: 'POST', headers: { 'mcp-session-id': 'nope' } })).status).toBe(404);
  });
});

describe('bounded sessions (MCP-15 to MCP-17)', () => {
  it('a request refused for want of a session keeps nothing: no server is built, or it is closed again (MCP-15)', async () => {
    const { url, handler, live } = await serveEcho();
    const refused: number[] = [];
    for (let index = 0; index < 20; index++) {
      const answer = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify({ jsonrpc: '2.0', id: index, method: 'tools/list' }) });
      refused.push(answer.status);
      await answer.text();
    }
    for (const init of [
      { method: 'GET', headers: { accept: 'text/event-stream' } },
      { method: 'DELETE' },
      { method: 'POST', headers: postHeaders(), body: '{"jsonrpc": "2.0", "id": 1, "method": ' },
      // An initialize the transport itself refuses (the client does not accept event streams).
      { method: 'POST', headers: { ...postHeaders(), accept: 'application/json' }, body: JSON.stringify(INITIALIZE) },
    ]) {
      const answer = await fetch(url, init);
      refused.push(answer.status);
      await answer.text();
    }
    expect(refused).toEqual([...Array.from({ length: 20 }, () => 400), 400, 400, 400, 406]);
    expect(live()).toBe(0);
    expect(handler.sessions()).toBe(0);
  });

  it('closes a session left idle for the idle time, and the client is told it is gone (MCP-16)', async () => {
    const { url, handler, live } = await serveEcho({ bounds: { idleMs: 300 } });
    const session = await initialize(url);
    expect(handler.sessions()).toBe(1);
    expect(await listStatus(url, session)).toBe(200);
    await waitFor(() => handler.sessions() === 0, 10_000);
    expect(live()).toBe(0);
    expect(await listStatus(url, session)).toBe(404);
  });

  it('past the limit, the least recently used idle session makes room, and a new one is refused while all are busy (MCP-16)', async () => {
    const { url, handler, live } = await serveEcho({ bounds: { maxSessions: 2 } });
    const first = await initialize(url);
    const second = await initialize(url);
    // The first is used again: the second is now the least recently used.
    expect(await listStatus(url, first)).toBe(200);
    const third = await initialize(url);
    expect(handler.sessions()).toBe(2);
    expect(live()).toBe(2);
    expect(await listStatus(url, second)).toBe(404);
    expect(await listStatus(url, first)).toBe(200);
    // Both sessions hold a stream open: neither is idle, so none makes room.
    const streams = new AbortController();
    for (const session of [first, third]) {
      const stream = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session }, signal: streams.signal });
      expect(stream.status).toBe(200);
    }
    const refused = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INITIALIZE) });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/2 sessions open.*--max-sessions/);
    expect(handler.sessions()).toBe(2);
    expect(live()).toBe(2);
    streams.abort();
    // Once the server has seen the streams close, the sessions are idle again and a new session takes the place of one.
    let status = 0;
    for (const started = Date.now(); status !== 200 && Date.now() - started < 10_000; ) {
      const answer = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INITIALIZE) });
      await answer.text();
      status = answer.status;
    }
    expect(status).toBe(200);
    expect(handler.sessions()).toBe(2);
    expect(live()).toBe(2);
  });

  it('a client that goes away mid-call cancels the run: its Activity is told and the run ends cancelled (MCP-17)', async () => {
    const { url, handler, waits, results, events } = await serveEcho({ bounds: { idleMs: 60_000 } });
    const session = await initialize(url);
    const call = httpRequest(url, { method: 'POST', headers: postHeaders(session) });
    call.on('error', () => undefined);
    call.end(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'waiter', arguments: {} } }));
    await waitFor(() => waits.started === 1, 10_000);
    // The client crashes: its socket is destroyed before the answer, and it never cancels nor ends the session.
    call.destroy();
    await waitFor(() => results.length === 1, 10_000);
    expect(waits.cancelled).toBe(1);
    expect(results[0]).toMatchObject({ ok: false, error: { code: 'cancelled_by_user' } });
    expect(events.find((event) => event.event === 'run.failed')).toMatchObject({ code: 'cancelled_by_user' });
    // The session itself stays for the client to come back to.
    expect(handler.sessions()).toBe(1);
    expect(await listStatus(url, session)).toBe(200);
  });

  it('a session with a call in flight is not idle, however long the call takes (MCP-16)', async () => {
    const { url, handler, waits } = await serveEcho({ bounds: { idleMs: 100 } });
    const session = await initialize(url);
    const controller = new AbortController();
    const call = fetch(url, {
      method: 'POST',
      headers: postHeaders(session),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'waiter', arguments: {} } }),
      signal: controller.signal,
    });
    await waitFor(() => waits.started === 1, 10_000);
    await new Promise((done) => setTimeout(done, 500));
    expect(handler.sessions()).toBe(1);
    expect(waits.cancelled).toBe(0);
    controller.abort();
    await call.catch(() => undefined);
    await waitFor(() => waits.cancelled === 1 && handler.sessions() === 0, 10_000);
  });
});
