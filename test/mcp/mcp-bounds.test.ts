/** The mcp toolset against hostile servers (MCP-18 to MCP-22): servers written with the SDK that die mid-call, list too much, answer too much, or list tools no model can be offered. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call, Message } from '../../src/protocol/types.js';
import { tempDir } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const HOSTILE = resolve('test/fixtures/mcp/hostile-server.mjs');
const servers: ChildProcess[] = [];

afterEach(() => {
  for (const server of servers.splice(0)) if (server.exitCode === null) server.kill('SIGKILL');
});

/** A toolset starting the hostile server on stdio with `env`. */
function stdioToolset(env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return { type: 'toolset', toolset: 'mcp', command: process.execPath, args: [HOSTILE], env, ...extra };
}

/** Starts the hostile server over Streamable HTTP with `env`; resolves with a toolset reaching it. */
async function httpToolset(env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const server = spawn(process.execPath, [HOSTILE], { env: { ...process.env, HOSTILE_HTTP: '1', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(server);
  const lines = createInterface({ input: server.stdout });
  const url = await new Promise<string>((answer) => lines.once('line', answer));
  return { toolset: { type: 'toolset', toolset: 'mcp', url, ...extra }, server };
}

/** Runs a document with the toolset, the model calling `steps` one step after another, then answering `done`. */
async function run(toolset: object, steps: Call[][] = []) {
  const runtime = createRuntime({ root: tempDir() });
  const model = stepModel(...steps.map((calls) => () => ({ calls, output: null })), () => ({ calls: [], output: 'done' }));
  const sink = memorySink();
  const result = await runtime.run(
    { context: [{ type: 'system', text: 'Use the tools.' }, toolset as Message], schema: { type: 'string' } },
    { model, tracer: new Tracer([sink]) },
  );
  const outcomes = sink.events.filter((event) => event.event === 'call.completed' || event.event === 'call.failed');
  return { result, model, outcomes, events: sink.events };
}

/** The names of the tools a model request offers. */
function offeredNames(request: ModelRequest | undefined): string[] {
  return [...JSON.stringify(request?.schema).matchAll(/"_tool":\{"const":("(?:[^"\\]|\\.)*")\}/g)].map((match) => JSON.parse(match[1] as string) as string);
}

/** The message of a failed call's error. */
function errorMessage(event: object | undefined): string {
  return String((event as { error?: { message?: unknown } } | undefined)?.error?.message ?? '');
}

describe('the mcp toolset against hostile servers (MCP-18 to MCP-22)', () => {
  it.each(['event stream', 'JSON'])(
    'a server at a URL that dies mid-call fails the call with activity_error and the run goes on (MCP-18, answers as %s)',
    async (answers) => {
      const { toolset } = await httpToolset(answers === 'JSON' ? { HOSTILE_JSON: '1' } : {});
      const { result, outcomes } = await run(toolset, [[{ _tool: 'die' }], [{ _tool: 'echo', text: 'hi' }]]);
      expect(result).toMatchObject({ ok: true, output: 'done' });
      expect(outcomes.map((event) => event.event)).toEqual(['call.failed', 'call.failed']);
      expect(outcomes[0]?.error).toMatchObject({ code: 'activity_error' });
      expect(errorMessage(outcomes[0])).toContain('"die"');
      // The next call finds the server gone: refused, or, when it reuses a pooled connection the dying process held, closed by it.
      expect(errorMessage(outcomes[1])).toMatch(/cannot be reached: .*(ECONNREFUSED|other side closed)/);
    },
    20_000,
  );

  it('a listing of 10,000 tools is refused past 1,000: mcp.failed, none of its tools offered, the run goes on (MCP-19)', async () => {
    const { result, model, events } = await run(stdioToolset({ HOSTILE_TOOLS: '10000' }));
    expect(result).toMatchObject({ ok: true, output: 'done' });
    const failed = events.find((event) => event.event === 'mcp.failed');
    expect(failed?.message).toContain('more than 1,000 tools');
    expect(offeredNames(model.requests[0])).toEqual([]);
  }, 20_000);

  it('a listing is read page by page and given up once past the bound: no later page is asked for (MCP-19)', async () => {
    const log = join(tempDir(), 'pages.log');
    const { result, events } = await run(stdioToolset({ HOSTILE_TOOLS: '10000', HOSTILE_PAGE: '100', HOSTILE_LOG: log }));
    expect(result).toMatchObject({ ok: true, output: 'done' });
    expect(events.find((event) => event.event === 'mcp.failed')?.message).toContain('more than 1,000 tools');
    // 11 pages of 100 hold the 1,001st tool; the 90 pages after it are never asked for.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(11);
  }, 20_000);

  it.each(['stdio', 'http', 'http answering JSON'])(
    'a result over the bound fails that call naming the size, and the server stays usable (MCP-20, %s)',
    async (transport) => {
      const toolset = transport === 'stdio' ? stdioToolset() : (await httpToolset(transport === 'http' ? {} : { HOSTILE_JSON: '1' })).toolset;
      const { result, outcomes } = await run(toolset, [[{ _tool: 'big', bytes: 50_000_000 }], [{ _tool: 'echo', text: 'still here' }]]);
      expect(result).toMatchObject({ ok: true, output: 'done' });
      expect(outcomes[0]?.error).toMatchObject({ code: 'activity_error' });
      expect(errorMessage(outcomes[0])).toMatch(/more than the limit of 10,485,760 bytes/);
      expect(errorMessage(outcomes[0])).not.toContain('cannot be reached');
      expect(outcomes[1]?.result).toBe('echo: still here');
    },
    30_000,
  );

  it.each(['stdio', 'http'])(
    'maxResultBytes sets the bound of the toolset’s results (MCP-20, %s)',
    async (transport) => {
      const toolset = transport === 'stdio' ? stdioToolset({}, { maxResultBytes: 1000 }) : (await httpToolset({}, { maxResultBytes: 1000 })).toolset;
      const { outcomes } = await run(toolset, [[{ _tool: 'big', bytes: 5000 }], [{ _tool: 'big', bytes: 500 }]]);
      expect(errorMessage(outcomes[0])).toMatch(/more than the limit of 1,000 bytes/);
      expect(outcomes[1]?.result).toBe('x'.repeat(500));
    },
    20_000,
  );

  it('a tool whose input or output schema cannot be compiled is left out with mcp.failed naming it and why; the others are offered (MCP-21)', async () => {
    const { result, model, events, outcomes } = await run(stdioToolset({ HOSTILE_DANGLING: '1' }), [[{ _tool: 'echo', text: 'hi' }]]);
    expect(result).toMatchObject({ ok: true, output: 'done' });
    const failed = events.filter((event) => event.event === 'mcp.failed');
    expect(failed.map((event) => event.tool)).toEqual(['dangling', 'bad_output']);
    expect(failed[0]?.message).toContain("its input schema does not compile. Expected a valid JSON Schema: can't resolve reference #/$defs/missing");
    expect(failed[1]?.message).toContain('its output schema does not compile');
    expect(offeredNames(model.requests[0])).toEqual(['echo', 'big', 'die']);
    expect(outcomes[0]?.result).toBe('echo: hi');
  }, 20_000);

  it('odd tool names are offered under safe names, distinct and stable, and calls reach the tool by its own name (MCP-22)', async () => {
    const { model, outcomes } = await run(stdioToolset({ HOSTILE_ODD_NAMES: '1' }));
    const names = offeredNames(model.requests[0]);
    expect(names).toHaveLength(10);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(names).size).toBe(names.length);
    expect(names.slice(0, 3)).toEqual(['echo', 'big', 'die']);
    expect(names).toContain('a_b');
    // "a b" takes a safe name of its own, the one spec/mcp.md shows.
    expect(names).toContain('a_b_c8687a08');
    expect(outcomes).toEqual([]);
    // The same listing maps to the same names, and a mapped name's call goes to the tool named "a b".
    const spaced = 'a_b_c8687a08';
    const again = await run(stdioToolset({ HOSTILE_ODD_NAMES: '1' }), [[{ _tool: spaced, text: 'hi' }]]);
    expect(offeredNames(again.model.requests[0])).toEqual(names);
    expect(again.outcomes[0]?.result).toBe('a b: hi');
  }, 20_000);
});
