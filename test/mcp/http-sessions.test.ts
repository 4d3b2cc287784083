/** The Streamable HTTP side (MCP-4, MCP-14): sessions open per client and end with the run tree that opened them; only /mcp answers. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { createMcpHttpHandler, type McpHttpHandler } from '../../src/mcp/http-sessions.js';
import { folderSource } from '../../src/mcp/request-source.js';
import { RequestTools } from '../../src/mcp/request-server.js';
import type { RunResult } from '../../src/protocol/contracts.js';
import { type RunningServer, serve } from '../../src/server/node-listener.js';
import { tempDir } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

let opened: { server: RunningServer; handler: McpHttpHandler; tools: RequestTools } | undefined;

afterEach(async () => {
  await opened?.handler.close();
  await opened?.server.close({ force: true });
  await opened?.tools.close();
  opened = undefined;
});

/** Serves a folder with one Request, `echo`, whose runs answer with their input, at a loopback /mcp. */
async function serveEcho(options: { stallDelete?: boolean } = {}) {
  const root = tempDir();
  writeFileSync(
    join(root, 'echo.json'),
    JSON.stringify({
      meta: { name: 'echo' },
      context: [{ type: 'input', schema: { type: 'object', properties: { word: { type: 'string' } } } }],
      schema: { type: 'string' },
    }),
  );
  const runtime = createRuntime({ root });
  const run = async (request: { reference: string }, input: unknown): Promise<RunResult> => {
    const model = stepModel(() => ({ calls: [], output: `echo ${(input as { word: string }).word}` }));
    return runtime.run(await runtime.load(request.reference), { model, input });
  };
  const tools = new RequestTools({ source: folderSource(root), run });
  const handler = createMcpHttpHandler(() => tools.createServer());
  // A server that stalls at the end of a session: it takes the DELETE and never answers it.
  const stalled = (request: Request) => (options.stallDelete && request.method === 'DELETE' ? new Promise<Response>(() => undefined) : handler.handle(request));
  const server = await serve(stalled, { port: 0, host: '127.0.0.1' });
  opened = { server, handler, tools };
  return { url: `${server.url}/mcp`, handler, origin: server.url };
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
