/** The `files` toolset (FILES-1 to FILES-7): sandboxes listed, read and written through built-in Activities, confined and gated. */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import { RequestError } from '../../src/protocol/errors.js';
import type { Call } from '../../src/protocol/types.js';
import type { ConfirmHook } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const SANDBOXES = {
  input: { path: './pipeline', mode: 'ro', allowSuffixes: ['.txt', '.pdf'] },
  output: { path: './evaluations', mode: 'rw', maxBytes: 64 },
};

/** A pipeline folder with text, a PDF-ish binary, a secret beside it and a symlink out of it. */
function project(sandboxes: object = SANDBOXES): string {
  const root = folderWith({
    'team/orchestrator.json': {
      meta: { name: 'orchestrator' },
      context: [
        { type: 'system', text: 'Evaluate.' },
        { type: 'toolset', toolset: 'files', sandboxes },
      ],
      schema: { type: 'string' },
    },
  });
  mkdirSync(join(root, 'team', 'pipeline', 'decks'), { recursive: true });
  mkdirSync(join(root, 'team', 'evaluations'), { recursive: true });
  writeFileSync(join(root, 'team', 'pipeline', 'decks', 'acme.txt'), 'ACME DECK TEXT');
  writeFileSync(join(root, 'team', 'pipeline', 'deck.pdf'), Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0xfe]));
  writeFileSync(join(root, 'team', 'pipeline', 'notes.md'), 'not allowed');
  writeFileSync(join(root, 'team', 'secret.txt'), 'TOP SECRET');
  symlinkSync(join(root, 'team', 'secret.txt'), join(root, 'team', 'pipeline', 'leak.txt'));
  return root;
}

/** Runs the orchestrator with one step of calls, then `done`; returns the trace's call outcomes by call index. */
async function run(root: string, calls: Call[], confirm?: ConfirmHook) {
  const runtime = createRuntime({ root });
  const model = stepModel(
    () => ({ calls, output: null }),
    () => ({ calls: [], output: 'done' }),
  );
  const sink = memorySink();
  const document = await runtime.load(join(root, 'team', 'orchestrator.json'));
  const result = await runtime.run(document, { model, tracer: new Tracer([sink]), ...(confirm ? { confirm } : {}) });
  // Outcomes in the order the calls were written, whatever order they settled in.
  const started = sink.events.filter((event) => event.event === 'call.started').map((event) => event.call);
  const outcomes = sink.events
    .filter((event) => event.event === 'call.completed' || event.event === 'call.failed')
    .sort((left, right) => started.indexOf(left.call) - started.indexOf(right.call));
  return { result, model, outcomes, events: sink.events };
}

const approveAll = createApprovalHook({ mode: 'approve_all' });

describe('the files toolset (FILES-1 to FILES-6)', () => {
  it('offers list_files, read_file and write_file with the sandboxes, and the tools reach the model', async () => {
    const root = project();
    const { model } = await run(root, []);
    const tools = JSON.stringify(model.requests[0]?.schema);
    for (const name of ['list_files', 'read_file', 'write_file']) expect(tools).toContain(name);
  });

  it('lists a sandbox under <sandbox>/<path>, by suffix and glob, never a symlink out', async () => {
    const root = project();
    const { outcomes } = await run(root, [
      { _tool: 'list_files', sandbox: 'input' },
      { _tool: 'list_files', sandbox: 'input', glob: 'decks/*.txt' },
    ]);
    expect(outcomes.map((event) => event.result)).toEqual([['input/deck.pdf', 'input/decks/acme.txt'], ['input/decks/acme.txt']]);
  });

  it('reads UTF-8 text, and refuses binary, a denied suffix, a symlink out and input/../secret.txt', async () => {
    const root = project();
    const { outcomes } = await run(root, [
      { _tool: 'read_file', path: 'input/decks/acme.txt' },
      { _tool: 'read_file', path: 'input/deck.pdf' },
      { _tool: 'read_file', path: 'input/notes.md' },
      { _tool: 'read_file', path: 'input/leak.txt' },
      { _tool: 'read_file', path: 'input/../secret.txt' },
      { _tool: 'read_file', path: 'input/%2e%2e/secret.txt' },
      { _tool: 'read_file', path: '/etc/passwd' },
    ]);
    expect(outcomes[0]).toMatchObject({ event: 'call.completed', result: 'ACME DECK TEXT' });
    expect(outcomes[1]).toMatchObject({ event: 'call.failed', error: { code: 'invalid_params', message: expect.stringContaining('not UTF-8 text') } });
    for (const outcome of outcomes.slice(2)) expect(outcome).toMatchObject({ event: 'call.failed', error: { code: 'delegate_forbidden' } });
    expect(JSON.stringify(outcomes)).not.toContain('TOP SECRET');
  });

  it('caps a read by the sandbox maxBytes', async () => {
    const root = project({ input: { path: './pipeline', mode: 'ro', maxBytes: 4 } });
    const { outcomes } = await run(root, [{ _tool: 'read_file', path: 'input/decks/acme.txt' }]);
    expect(outcomes[0]).toMatchObject({ event: 'call.failed', error: { code: 'invalid_params', message: expect.stringContaining('more than the 4') } });
  });

  it('writes into an rw sandbox once approved, and never into a ro one or past maxBytes', async () => {
    const root = project();
    const { outcomes } = await run(
      root,
      [
        { _tool: 'write_file', path: 'output/acme/result.md', content: 'GOOD' },
        { _tool: 'write_file', path: 'input/new.txt', content: 'x' },
        { _tool: 'write_file', path: 'output/big.md', content: 'x'.repeat(65) },
        { _tool: 'write_file', path: 'output/../escaped.md', content: 'x' },
      ],
      approveAll,
    );
    expect(readFileSync(join(root, 'team', 'evaluations', 'acme', 'result.md'), 'utf8')).toBe('GOOD');
    expect(outcomes[0]).toMatchObject({ event: 'call.completed', result: { path: 'output/acme/result.md', bytes: 4 } });
    expect(outcomes[1]).toMatchObject({ event: 'call.failed', error: { code: 'delegate_forbidden', message: expect.stringContaining('read-only') } });
    expect(outcomes[2]).toMatchObject({ event: 'call.failed', error: { code: 'invalid_params' } });
    expect(outcomes[3]).toMatchObject({ event: 'call.failed', error: { code: 'delegate_forbidden' } });
    expect(existsSync(join(root, 'team', 'pipeline', 'new.txt'))).toBe(false);
    expect(existsSync(join(root, 'team', 'escaped.md'))).toBe(false);
  });

  it('asks approval for write_file by default: strict mode writes nothing', async () => {
    const root = project();
    const { outcomes, events } = await run(root, [{ _tool: 'write_file', path: 'output/result.md', content: 'GATED' }], createApprovalHook({ mode: 'strict' }));
    expect(events.some((event) => event.event === 'approval.requested')).toBe(true);
    expect(outcomes[0]).toMatchObject({ event: 'call.failed' });
    expect(existsSync(join(root, 'team', 'evaluations', 'result.md'))).toBe(false);
  });

  it('refuses a sandbox whose folder leaves the root, when it is used', async () => {
    const root = project({ out: { path: '../..', mode: 'ro' } });
    const { outcomes } = await run(root, [{ _tool: 'list_files', sandbox: 'out' }]);
    expect(outcomes[0]).toMatchObject({ event: 'call.failed', error: { code: 'delegate_forbidden', message: expect.stringContaining('outside the root') } });
  });
});

describe('toolset documents that break the rules (FILES-1, FILES-2)', () => {
  const load = async (message: object) => {
    const root = folderWith({ 'bad.json': { context: [message], schema: { type: 'string' } } });
    return createRuntime({ root }).load(join(root, 'bad.json'));
  };

  it.each([
    [{ type: 'toolset', toolset: 'shell', sandboxes: { a: { path: '.', mode: 'ro' } } }, '/context/0/toolset'],
    [{ type: 'toolset', toolset: 'files', sandboxes: { a: { path: '.', mode: 'rx' } } }, '/context/0/sandboxes/a/mode'],
    [{ type: 'toolset', toolset: 'files', sandboxes: { 'bad name': { path: '.', mode: 'ro' } } }, '/context/0/sandboxes/bad name'],
    [{ type: 'toolset', toolset: 'files', sandboxes: { a: { path: '/etc', mode: 'ro' } } }, '/context/0/sandboxes/a/path'],
  ])('refuses %j at %s', async (message, at) => {
    const error = await load(message).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toContain(at);
  });
});
