/** The `mcp` toolset (MCP-1 to MCP-7): a real MCP server written with the SDK, its tools called from a Request, gated, crashed and closed. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import { RequestError } from '../../src/protocol/errors.js';
import type { ConfirmHook } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call } from '../../src/protocol/types.js';
import { startCli, tempDir, waitFor } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const SERVER = resolve('test/fixtures/mcp/notes-server.mjs');
const STUBBORN = resolve('test/fixtures/mcp/stubborn-server.mjs');

/** The error of a failed call's event, as data. */
function errorOf(event: object | undefined): { code?: string; message?: string } {
  return ((event as { error?: unknown } | undefined)?.error ?? {}) as { code?: string; message?: string };
}

/** Writes JSON documents into `root`. */
function writeDocuments(root: string, documents: Record<string, unknown>): void {
  for (const [name, document] of Object.entries(documents)) writeFileSync(join(root, name), JSON.stringify(document));
}

/** The log the notes server writes: started, each call, cancellations, its end. */
function serverLog(root: string): string[] {
  const path = join(root, 'notes.log');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
}

/** A toolset starting the notes server, logging to the folder's notes.log. */
function notesToolset(root: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  return { type: 'toolset', toolset: 'mcp', command: process.execPath, args: [SERVER], env: { NOTES_LOG: join(root, 'notes.log'), ...env }, ...extra };
}

/** A folder with a Request using the notes server (its toolset from `toolset`, its config from `config`). */
function project(toolset: (root: string) => object, config: object = {}): string {
  const root = tempDir();
  writeDocuments(root, {
    'keeper.json': { meta: { name: 'notes-keeper' }, config, context: [{ type: 'system', text: 'Keep notes.' }, toolset(root)], schema: { type: 'string' } },
  });
  return root;
}

/** Runs the keeper with scripted steps of calls (then `done`); the outcomes are in the order the calls were written. */
async function run(root: string, steps: Call[][], options: { confirm?: ConfirmHook; signal?: AbortSignal; trusted?: boolean } = {}) {
  const runtime = createRuntime({ root });
  const model = stepModel(...steps.map((calls) => () => ({ calls, output: null })), () => ({ calls: [], output: 'done' }));
  const sink = memorySink();
  const document = await runtime.load(join(root, 'keeper.json'));
  const result = await runtime.run(document, { model, tracer: new Tracer([sink]), ...options });
  const started = sink.events.filter((event) => event.event === 'call.started').map((event) => event.call);
  const outcomes = sink.events
    .filter((event) => event.event === 'call.completed' || event.event === 'call.failed')
    .sort((left, right) => started.indexOf(left.call) - started.indexOf(right.call));
  return { result, model, outcomes, events: sink.events };
}

describe('the mcp toolset (MCP-1 to MCP-7)', () => {
  it('offers the allowed tools the server lists, with their input schemas as parameters and descriptions (MCP-3)', async () => {
    const root = project((folder) => notesToolset(folder, { allow: ['read_*', 'write_note'] }));
    const { model, events } = await run(root, []);
    const schema = JSON.stringify(model.requests[0]?.schema);
    expect(schema).toContain('"read_note"');
    expect(schema).toContain('"write_note"');
    expect(schema).toContain('Reads a note by name.');
    expect(schema).not.toContain('"crash"');
    // The server and its listing are traced (TRACE-20).
    const connected = events.find((event) => event.event === 'mcp.connected');
    expect(connected?.tools).toEqual(['read_note', 'write_note', 'slow', 'fail', 'crash']);
  });

  it('calls two tools in parallel, one gated by a tool rule, and returns structured content or text (MCP-5)', async () => {
    const asked: string[] = [];
    const confirm = createApprovalHook({
      mode: 'interactive',
      prompt: async (request) => {
        asked.push(request.toolName);
        return { decision: 'approved' };
      },
    });
    const root = project((folder) => notesToolset(folder), { toolRules: [{ tool: 'write_*', approval: 'required' }] });
    const { result, outcomes } = await run(
      root,
      [
        [
          { _tool: 'read_note', name: 'todo' },
          { _tool: 'write_note', name: 'idea', text: 'fly' },
        ],
      ],
      { confirm },
    );
    expect(result.ok).toBe(true);
    expect(asked).toEqual(['write_note']);
    expect(outcomes.map((event) => event.result)).toEqual([{ name: 'todo', text: 'buy milk' }, 'saved idea']);
    // Both calls went to one server, started once.
    expect(serverLog(root).filter((line) => line.startsWith('started'))).toHaveLength(1);
  });

  it('a gated call the approval rejects never reaches the server', async () => {
    const root = project((folder) => notesToolset(folder), { toolRules: [{ tool: 'write_note', approval: 'required' }] });
    const { outcomes } = await run(root, [[{ _tool: 'write_note', name: 'idea', text: 'fly' }]], { confirm: createApprovalHook({ mode: 'strict' }) });
    expect(outcomes[0]?.error).toMatchObject({ code: 'rejected_by_user' });
    expect(serverLog(root).some((line) => line.startsWith('call write_note'))).toBe(false);
  });

  it('a tool rule that forbids a tool keeps it from the model', async () => {
    const root = project((folder) => notesToolset(folder), { toolRules: [{ tool: 'crash', allowed: false }] });
    const { model } = await run(root, []);
    expect(JSON.stringify(model.requests[0]?.schema)).not.toContain('"crash"');
  });

  it('a server that crashes mid-run fails that call and every later one with activity_error, and the run goes on (MCP-6)', async () => {
    const root = project((folder) => notesToolset(folder));
    const { result, outcomes } = await run(root, [[{ _tool: 'crash' }], [{ _tool: 'read_note', name: 'todo' }]]);
    expect(result).toMatchObject({ ok: true, output: 'done' });
    expect(outcomes.map((event) => errorOf(event).code)).toEqual(['activity_error', 'activity_error']);
    expect(errorOf(outcomes[1]).message).toContain('crashing on purpose');
  });

  it('a server that fails to start offers the tools allow names, each call failing with activity_error (MCP-6)', async () => {
    const root = project((folder) => notesToolset(folder, { allow: ['read_note', 'write_*'] }, { NOTES_FAIL_START: '1' }));
    const { result, outcomes, events, model } = await run(root, [[{ _tool: 'read_note', name: 'todo' }]]);
    expect(result.ok).toBe(true);
    expect(outcomes[0]?.error).toMatchObject({ code: 'activity_error' });
    expect(errorOf(outcomes[0]).message).toContain('cannot open the notebook');
    expect(events.find((event) => event.event === 'mcp.failed')?.message).toContain('cannot open the notebook');
    // A glob names no tool of a server that never listed any.
    expect(JSON.stringify(model.requests[0]?.schema)).not.toContain('write_');
  });

  it('an error the tool reports fails the call with activity_error carrying its text (MCP-5)', async () => {
    const root = project((folder) => notesToolset(folder));
    const { outcomes } = await run(root, [[{ _tool: 'fail' }]]);
    expect(outcomes[0]?.error).toMatchObject({ code: 'activity_error' });
    expect(errorOf(outcomes[0]).message).toContain('the notebook is locked');
  });

  it('closes the server when the run tree ends (MCP-4, LOOP-19)', async () => {
    const root = project((folder) => notesToolset(folder));
    await run(root, [[{ _tool: 'read_note', name: 'todo' }]]);
    await waitFor(() => serverLog(root).some((line) => line === 'stdin closed' || line === 'stopped'), 25_000);
  });

  it('leaves no server behind when one that failed to start ignores SIGTERM: the tree waits for it to be gone (MCP-4, MCP-6)', async () => {
    const pidFile = join(tempDir(), 'pid');
    const root = project(() => ({ type: 'toolset', toolset: 'mcp', command: process.execPath, args: [STUBBORN], env: { PID_FILE: pidFile }, allow: ['x'] }));
    const { result, outcomes } = await run(root, [[{ _tool: 'x' }]]);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      expect(result).toMatchObject({ ok: true, output: 'done' });
      expect(errorOf(outcomes[0]).message).toContain('this server will not start');
      // A command line that exits as the run ends would otherwise leave the server running for ever.
      expect(alive()).toBe(false);
    } finally {
      if (alive()) process.kill(pid, 'SIGKILL');
    }
  }, 30_000);

  it('cancelling the run cancels the call on the server and closes it (MCP-5)', async () => {
    const root = project((folder) => notesToolset(folder));
    const controller = new AbortController();
    const running = run(root, [[{ _tool: 'slow', ms: 60_000 }]], { signal: controller.signal });
    // Generous bounds: a busy machine starts the server slowly; not a timing claim.
    await waitFor(() => serverLog(root).some((line) => line.startsWith('call slow')), 25_000);
    controller.abort();
    const { result } = await running;
    expect(result).toMatchObject({ ok: false, error: { code: 'cancelled_by_user' } });
    await waitFor(() => serverLog(root).includes('cancelled slow'), 25_000);
  });

  it('shares one server across the run tree: a delegate with the same toolset uses the same connection (MCP-4)', async () => {
    const root = tempDir();
    const toolset = notesToolset(root);
    writeDocuments(root, {
      'keeper.json': {
        meta: { name: 'keeper' },
        context: [
          { type: 'system', text: 'Keep.' },
          toolset,
          { type: 'tool', tool: { helper: { type: 'object', properties: { _delegate: { const: './helper.json' } } } } },
        ],
        schema: { type: 'string' },
      },
      'helper.json': { meta: { name: 'helper' }, context: [{ type: 'system', text: 'Help.' }, toolset], schema: { type: 'string' } },
    });
    const runtime = createRuntime({ root });
    const model = stepModel((request) => {
      const calls =
        request.step === 0
          ? JSON.stringify(request.schema).includes('"helper"')
            ? [{ _tool: 'helper' }, { _tool: 'read_note', name: 'todo' }]
            : [{ _tool: 'write_note', name: 'a', text: 'b' }]
          : [];
      return { calls, output: request.step === 0 ? null : 'done' };
    });
    const result = await runtime.run(await runtime.load(join(root, 'keeper.json')), { model });
    expect(result.ok).toBe(true);
    const log = serverLog(root);
    expect(log.filter((line) => line.startsWith('started'))).toHaveLength(1);
    expect(log.filter((line) => line.startsWith('call '))).toHaveLength(2);
  });

  it('a tool name that collides with another tool or a built-in one is invalid_request naming the pointer; a prefix avoids it (MCP-3)', async () => {
    const root = tempDir();
    writeDocuments(root, {
      'keeper.json': {
        context: [{ type: 'tool', tool: { read_note: { type: 'object', properties: {} } } }, notesToolset(root, { allow: ['read_note'] })],
        schema: { type: 'string' },
      },
      'prefixed.json': {
        context: [{ type: 'tool', tool: { read_note: { type: 'object', properties: {} } } }, notesToolset(root, { allow: ['read_note'], prefix: 'notes_' })],
        schema: { type: 'string' },
      },
    });
    const runtime = createRuntime({ root });
    const result = await runtime.run(await runtime.load(join(root, 'keeper.json')), { model: stepModel(() => ({ calls: [], output: 'x' })) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(RequestError);
    expect(result.error.message).toContain('/context/1');
    expect(result.error.message).toContain('"read_note"');
    expect(result.error.message).toContain('prefix');
    const model = stepModel(
      () => ({ calls: [{ _tool: 'notes_read_note', name: 'todo' }], output: null }),
      () => ({ calls: [], output: 'ok' }),
    );
    const prefixed = await runtime.run(await runtime.load(join(root, 'prefixed.json')), { model });
    expect(prefixed.ok).toBe(true);
    expect(serverLog(root).some((line) => line.startsWith('call read_note'))).toBe(true);
  });

  it("an answer whose parameters break the tool's input schema is re-asked, and never reaches the server (LOOP-8)", async () => {
    const root = project((folder) => notesToolset(folder));
    const runtime = createRuntime({ root });
    const answers = [
      { calls: [{ _tool: 'read_note', name: 7 }], output: null },
      { calls: [{ _tool: 'read_note', name: 'todo' }], output: null },
      { calls: [], output: 'done' },
    ];
    let asked = 0;
    const model = stepModel(() => answers[Math.min(asked++, answers.length - 1)]);
    const result = await runtime.run(await runtime.load(join(root, 'keeper.json')), { model });
    expect(result).toMatchObject({ ok: true, output: 'done' });
    // The re-ask names what was wrong, at the call's parameter.
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('/calls/0/name');
    expect(serverLog(root).filter((line) => line.startsWith('call read_note'))).toEqual(['call read_note {"name":"todo"}']);
  });

  it('Ctrl-C on delegate-run cancels the call and closes the server: exit 130 (MCP-4, CLI-13)', async () => {
    const root = project((folder) => notesToolset(folder));
    writeDocuments(root, {
      'keeper.cassette.json': {
        version: 1,
        entries: [{ match: { request: 'notes-keeper', step: 0 }, solution: { calls: [{ _tool: 'slow', ms: 60_000 }], output: null } }],
      },
    });
    const cli = startCli([join(root, 'keeper.json')]);
    await waitFor(() => serverLog(root).some((line) => line.startsWith('call slow')), 25_000);
    cli.child.kill('SIGINT');
    const ended = await cli.done;
    expect(ended.code).toBe(130);
    // The server was told to stop before the command exited.
    expect(serverLog(root)).toContain('cancelled slow');
    await waitFor(() => serverLog(root).some((line) => line === 'stdin closed' || line === 'stopped'), 25_000);
  });

  it('a document not trusted to run local Activities starts no server (MCP-7)', async () => {
    const root = project((folder) => notesToolset(folder, { allow: ['read_note'] }));
    const { outcomes } = await run(root, [[{ _tool: 'read_note', name: 'todo' }]], { trusted: false });
    expect(outcomes[0]?.error).toBeDefined();
    expect(serverLog(root)).toEqual([]);
  });

  it('refuses a toolset with both or neither of command and url, and a url that is not http(s), naming the pointer (MCP-2)', () => {
    const runtime = createRuntime();
    const load = (toolset: object) => () =>
      runtime.validate({ context: [{ type: 'toolset', toolset: 'mcp', ...toolset }], schema: { type: 'string' } }, 'bad.json');
    expect(load({})).toThrow(/bad\.json.*\/context\/0.*exactly one of "command"/s);
    expect(load({ command: 'x', url: 'http://a/' })).toThrow(/exactly one of/);
    expect(load({ url: 'ftp://a/' })).toThrow(/\/context\/0\/url.*http\(s\) URL/s);
    expect(load({ url: 'http://a/', args: ['x'] })).toThrow(/\/context\/0\/args/);
    expect(load({ command: 'x', allow: ['bad name'] })).toThrow(/\/context\/0\/allow/);
  });
});
