/** `delegate-mcp` end to end (MCP-8 to MCP-17): the built binary driven by the SDK's own client, over stdio and Streamable HTTP, offline. */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Progress, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { SERVE_BIN, offlineEnv, readTrace, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const MCP_BIN = resolve('dist/bundle/mcp.js');
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
});

/** A client connected over stdio to `delegate-mcp <args>`, started offline in `cwd`. */
async function connect(args: string[], cwd = process.cwd()): Promise<{ client: Client; stderr: () => string }> {
  const env = offlineEnv() as Record<string, string>;
  const transport = new StdioClientTransport({ command: process.execPath, args: [MCP_BIN, ...args], cwd, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/**
 * The Requests of requests/ that replay only with a server running: `release-note` delegates to the
 * A2A agent `delegate-serve requests/a2a/remote --a2a --port 4141` serves, so offline (and with its
 * host not allowed) its call fails and its cassette's next step matches nothing; test/a2a/round-trip.test.ts
 * runs it with the server.
 */
const NEEDS_A_SERVER = new Set(['release-note']);

/** The names of the Requests under `folder` that have a cassette beside them (CAS-11): those that run offline. */
function requestsWithCassettes(folder: string): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.json') || file.endsWith('.cassette.json') || !existsSync(join(folder, file.replace(/\.json$/, '.cassette.json')))) continue;
    names.add(JSON.parse(readFileSync(join(folder, file), 'utf8')).meta.name);
  }
  return names;
}

/** Arguments an input schema takes: a placeholder string for each required property (the placeholder is all such Requests ask for offline). */
function placeholderArguments(schema: { properties?: Record<string, unknown>; required?: string[] }): Record<string, unknown> {
  return Object.fromEntries((schema.required ?? []).map((name) => [name, (schema.properties?.[name] as { type?: string })?.type === 'number' ? 1 : 'x']));
}

/** A folder with a Request whose one tool waits until cancelled, a cassette calling it, and one Request whose cassette matches nothing. */
function slowFolder(): string {
  const root = tempDir();
  const write = (name: string, value: unknown) => writeFileSync(join(root, name), typeof value === 'string' ? value : JSON.stringify(value));
  write('waiter.json', {
    meta: { name: 'waiter', description: 'Waits for a long time.' },
    context: [
      { type: 'system', text: 'Wait.' },
      { type: 'tool', tool: { wait: { type: 'object', properties: { _activity: { const: 'wait' } } } } },
    ],
    schema: { type: 'string' },
  });
  write('waiter.cassette.json', {
    version: 1,
    entries: [
      { match: { request: 'waiter', step: 0 }, solution: { calls: [{ _tool: 'wait' }], output: null } },
      { match: { request: 'waiter', step: 1 }, solution: { calls: [], output: 'waited' } },
    ],
  });
  write('broken.json', { meta: { name: 'broken' }, context: [{ type: 'system', text: 'Fail.' }], schema: { type: 'string' } });
  write('broken.cassette.json', { version: 1, entries: [{ match: { request: 'someone-else' }, solution: { calls: [], output: 'x' } }] });
  write(
    'activities.mjs',
    `import { appendFileSync } from 'node:fs';
export default {
  wait: (_call, _tool, _context, environment) => new Promise((resolve, reject) => {
    appendFileSync(${JSON.stringify(join(root, 'wait.log'))}, 'waiting\\n');
    const timer = setTimeout(() => resolve('slept'), 60000);
    environment.signal.addEventListener('abort', () => { clearTimeout(timer); appendFileSync(${JSON.stringify(join(root, 'wait.log'))}, 'cancelled\\n'); reject(new Error('cancelled')); });
  }),
};
`,
  );
  return root;
}

const BRIEF = { brief: 'a sad ballad', ambience: 'rain on a window' };

/** The producer's output as `delegate-run --json` prints it, for comparison. */
async function producerOutput(): Promise<unknown> {
  const cli = startCli(['requests/music/producer.json', '--input', JSON.stringify(BRIEF), '--json']);
  return JSON.parse((await cli.done).stdout).output;
}

/** Starts a server binary that says its URL on stderr; resolves with the URL and the process. */
async function startListening(args: string[], bin: string, pattern: RegExp) {
  const server = startCli(args, { bin });
  let url = '';
  server.child.stderr?.on('data', (chunk: Buffer) => {
    const match = pattern.exec(chunk.toString());
    if (match?.[1]) url = match[1];
  });
  await waitFor(() => url !== '', 25_000);
  return { url, server };
}

describe('delegate-mcp (MCP-8 to MCP-17)', () => {
  it('lists the valid Requests of requests/ as tools with their input and output schemas (MCP-9, MCP-10)', async () => {
    const { client } = await connect([]);
    const { tools } = await client.listTools();
    const producer = tools.find((tool) => tool.name === 'producer');
    const document = JSON.parse(readFileSync('requests/music/producer.json', 'utf8'));
    expect(producer?.description).toBe(document.meta.description);
    expect(producer?.inputSchema).toEqual(document.context[1].schema);
    expect(producer?.outputSchema).toEqual(document.schema);
    // A Request whose output is a string is wrapped as {output}.
    const translator = tools.find((tool) => tool.name === 'translator');
    expect(translator?.outputSchema).toEqual({ type: 'object', properties: { output: { type: 'string' } }, required: ['output'] });
  });

  it('runs a Request as delegate-run would: structured content, the JSON as text, progress per step and delegation (MCP-11)', async () => {
    const { client } = await connect([]);
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'producer', arguments: BRIEF }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    expect(result.isError).toBeFalsy();
    const output = await producerOutput();
    expect(result.structuredContent).toEqual(output);
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toEqual(output);
    const messages = progress.map((update) => update.message);
    expect(messages).toContain('producer delegated to composer');
    expect(messages).toContain('producer: step 1 answered');
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_update, index) => index + 1));
  });

  it('offline, answers every tool of requests/ three times with the same output: each call replays its cassette from the start (CAS-17)', async () => {
    const { client } = await connect(['--activities', 'requests/weather/activities.mjs']);
    const { tools } = await client.listTools();
    const replayed = requestsWithCassettes('requests');
    // The inputs their cassettes were recorded with, where a run's answers depend on them.
    const inputs: Record<string, Record<string, unknown>> = {
      producer: BRIEF,
      orchestrator: { userId: 'u_123', text: 'Hello, world!' },
      forecast: { city: 'Lisbon', activity: 'cycling' },
      reviewer: { note: 'Pinning files is now possible.' },
    };
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining([...replayed]));
    for (const tool of tools) {
      const calls = [];
      // Arguments its input schema takes (MCP-23): the recorded ones, else a placeholder for each required property.
      const args = inputs[tool.name] ?? placeholderArguments(tool.inputSchema);
      for (let time = 0; time < 3; time += 1) calls.push(await client.callTool({ name: tool.name, arguments: args }));
      const [first, ...again] = calls.map((call) => ({ isError: call.isError ?? false, content: call.content as { text: string }[] }));
      if (!first) throw new Error('unreachable: three calls were made');
      expect(again, tool.name).toEqual([first, first]);
      // A Request with no cassette beside it has no model offline, the same way every time.
      if (NEEDS_A_SERVER.has(tool.name)) expect(first.isError, `${tool.name} runs only with its agent served`).toBe(true);
      else if (replayed.has(tool.name)) expect(first.isError, `${tool.name}: ${JSON.stringify(first.content)}`).toBe(false);
      else if (first.isError) expect(first.content[0]?.text, tool.name).toMatch(/^usage_error: .*needs a model/);
    }
  });

  it('refuses arguments its input schema does not take as invalid params, every pointer named, before its run starts (MCP-23)', async () => {
    const { client } = await connect([]);
    for (const [args, issues] of [
      [{}, [{ pointer: '', message: 'Expected property "brief" to be present.' }]],
      [{ brief: 3 }, [{ pointer: '/brief', message: 'Expected string.' }]],
    ] as const) {
      const refused = await client.callTool({ name: 'producer', arguments: args }).then(
        () => undefined,
        (error: unknown) => error as { code: number; message: string; data: unknown },
      );
      expect(refused?.code).toBe(-32602);
      expect(refused?.message).toContain('The arguments of producer do not match its input schema');
      expect(refused?.data).toEqual({ code: 'invalid_input', issues });
    }
  });

  it('a failed run is a tool error carrying the code and message (MCP-12)', async () => {
    const root = slowFolder();
    const { client } = await connect([root, '--activities', join(root, 'activities.mjs')]);
    const result = await client.callTool({ name: 'broken', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/^model_error: /);
    expect(result._meta?.['delegate-run/error']).toMatchObject({ code: 'model_error' });
  });

  it('cancelling the call cancels the run, its Activities and leaves a complete trace (MCP-11)', async () => {
    const root = slowFolder();
    const trace = join(root, 'trace.jsonl');
    const { client } = await connect([root, '--activities', join(root, 'activities.mjs'), '--trace', trace]);
    const controller = new AbortController();
    const call = client.callTool({ name: 'waiter', arguments: {} }, undefined, { signal: controller.signal });
    const log = () => {
      try {
        return readFileSync(join(root, 'wait.log'), 'utf8');
      } catch {
        return '';
      }
    };
    await waitFor(() => log().includes('waiting'), 25_000);
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => log().includes('cancelled'), 25_000);
    await waitFor(() => readTrace(trace).some((event) => event.event === 'run.failed'), 25_000);
    expect(readTrace(trace).find((event) => event.event === 'run.failed')).toMatchObject({ code: 'cancelled_by_user' });
  });

  it('tells the client when the Requests change (MCP-13)', async () => {
    const root = slowFolder();
    const { client } = await connect([root]);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['broken', 'waiter']);
    writeFileSync(
      join(root, 'greeter.json'),
      JSON.stringify({ meta: { name: 'greeter' }, context: [{ type: 'system', text: 'Hi.' }], schema: { type: 'string' } }),
    );
    await waitFor(() => changed > 0, 25_000);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['broken', 'greeter', 'waiter']);
  });

  it('serves Streamable HTTP on 127.0.0.1 with --http (MCP-14)', async () => {
    const root = slowFolder();
    const { url, server } = await startListening([root, '--http', '0'], MCP_BIN, /serving at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    try {
      const client = new Client({ name: 'test', version: '1.0.0' });
      clients.push(client);
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['broken', 'waiter']);
      await client.close();
    } finally {
      server.child.kill('SIGINT');
      expect((await server.done).code).toBe(0);
    }
  });

  it('closes a session idle for --session-idle, and refuses sessions past --max-sessions while all are busy (MCP-16)', async () => {
    const root = slowFolder();
    const args = [root, '--http', '0', '--session-idle', '0.5', '--max-sessions', '1'];
    const { url, server } = await startListening(args, MCP_BIN, /serving at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    try {
      const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize) });
      await opened.text();
      const session = opened.headers.get('mcp-session-id') as string;
      // The one session holds a stream open: it is busy, and a second is refused.
      const streams = new AbortController();
      await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session }, signal: streams.signal });
      const refused = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initialize) });
      expect(refused.status).toBe(503);
      expect(await refused.text()).toContain('--max-sessions');
      streams.abort();
      let status = 0;
      const list = {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': session },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      };
      // Asked less often than the idle time, so the asking does not keep the session alive.
      for (const started = Date.now(); status !== 404 && Date.now() - started < 25_000; ) {
        await new Promise((done) => setTimeout(done, 1000));
        const answer = await fetch(url, list);
        await answer.text();
        status = answer.status;
      }
      expect(status).toBe(404);
    } finally {
      server.child.kill('SIGINT');
      expect((await server.done).code).toBe(0);
    }
  });

  it('serves a delegate-serve catalog URL, fetching from its host as delegate-run would (MCP-8, MCP-9)', async () => {
    const served = await startListening(['requests', '--port', '0'], SERVE_BIN, /at (http:\/\/127\.0\.0\.1:\d+)\//);
    try {
      const { client } = await connect([`${served.url}/`, '--model', 'replay:requests/music/producer.cassette.json']);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['producer', 'composer', 'translator']));
      const result = await client.callTool({ name: 'producer', arguments: BRIEF });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(await producerOutput());
    } finally {
      served.server.child.kill('SIGINT');
      await served.server.done;
    }
  });

  it("both ways: a Request's mcp toolset reaches delegate-mcp over Streamable HTTP by url (MCP-2, MCP-14)", async () => {
    const mcp = await startListening(['requests', '--http', '0'], MCP_BIN, /serving at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    try {
      const runtime = createRuntime({ root: tempDir() });
      const model = stepModel(
        () => ({ calls: [{ _tool: 'producer', ...BRIEF }], output: null }),
        () => ({ calls: [], output: 'produced' }),
      );
      const sink = memorySink();
      const document = { context: [{ type: 'toolset', toolset: 'mcp', url: mcp.url, allow: ['producer'] }], schema: { type: 'string' } };
      const result = await runtime.run(document, { model, tracer: new Tracer([sink]) });
      expect(result).toMatchObject({ ok: true, output: 'produced' });
      expect(sink.events.find((event) => event.event === 'call.completed')?.result).toEqual(await producerOutput());
    } finally {
      mcp.server.child.kill('SIGINT');
      expect((await mcp.server.done).code).toBe(0);
    }
  });

  it('refuses bad usage before serving: a missing folder, --input, --approve interactive (MCP-8)', async () => {
    for (const [args, said] of [
      [['no-such-folder'], 'no-such-folder'],
      [['--input', '{}'], '--input is not an option of delegate-mcp'],
      [['--approve', 'interactive'], 'needs a terminal'],
      [['--http', 'x'], '--http expects a port'],
      [['--max-sessions', '5'], '--max-sessions is only for --http'],
      [['--http', '0', '--max-sessions', '0'], '--max-sessions expects a whole number of at least 1'],
      [['--http', '0', '--session-idle', 'soon'], '--session-idle expects a positive number of seconds'],
    ] as const) {
      const run = startCli([...args], { bin: MCP_BIN });
      const result = await run.done;
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(said);
    }
  });
});
