/** Attachments read from the caller's file sandboxes (ATT-2) and handed to created workers (WRK-9): confined, policed and approved like any other. */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import type { ConfirmHook, ConfirmRequest } from '../../src/protocol/contracts.js';
import { memorySink, Tracer } from '../../src/protocol/trace/trace.js';
import { folderWith, tempDir } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const PDF = '%PDF-1.4 PIPELINE-DECK';

const evaluator = {
  meta: { name: 'evaluator' },
  config: { attachments: { maxCount: 1 } },
  context: [{ type: 'system', text: 'Evaluate the attached deck.' }],
  schema: { type: 'string' },
};

/** A root whose caller has an `input` sandbox over ./pipeline (only .pdf, at most 100 bytes) and an evaluator worker. */
function setup(sandbox: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const root = folderWith({
    'orchestrator.json': {
      meta: { name: 'orchestrator' },
      ...extra,
      context: [
        { type: 'toolset', toolset: 'files', sandboxes: { input: { path: './pipeline', mode: 'ro', allowSuffixes: ['.pdf'], maxBytes: 100, ...sandbox } } },
        { type: 'workers', from: './team/', allow: ['evaluator'], create: true },
      ],
      schema: { type: 'string' },
    },
    'team/evaluator.json': evaluator,
  });
  mkdirSync(join(root, 'pipeline'));
  writeFileSync(join(root, 'pipeline', 'deck.pdf'), PDF);
  writeFileSync(join(root, 'pipeline', 'big.pdf'), 'x'.repeat(101));
  writeFileSync(join(root, 'pipeline', 'notes.txt'), 'not a pdf');
  writeFileSync(join(root, 'deck.pdf'), '%PDF-1.4 ROOT-DECK');
  return root;
}

async function run(root: string, calls: ((request: ModelRequest) => unknown)[], confirm: ConfirmHook = createApprovalHook({ mode: 'approve_all' })) {
  const runtime = createRuntime({ root });
  const model = stepModel(...calls);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, confirm, tracer: new Tracer([sink]) });
  return { result, model, events: sink.events };
}

/** The orchestrator calls the evaluator with `attachments`, then ends with what it got back. */
function evaluate(attachments: unknown) {
  return [
    (request: ModelRequest) =>
      request.requestName === 'orchestrator'
        ? { calls: [{ _tool: 'evaluator', input: 'judge it', attachments, _outputPath: '†state.verdict' }], output: null }
        : { calls: [], output: 'FUNDABLE' },
    (request: ModelRequest) => (request.requestName === 'orchestrator' ? { calls: [], output: 'done' } : { calls: [], output: 'FUNDABLE' }),
  ];
}

/** The native files the first model call of the run named `name` received. */
function filesSentTo(requests: readonly ModelRequest[], name: string) {
  return requests.find((request) => request.requestName === name)?.messages.flatMap((message) => message.files ?? []) ?? [];
}

function failure(events: Array<Record<string, unknown>>) {
  return events.find((event) => event.event === 'call.failed')?.error;
}

describe('attachments from a sandbox (ATT-2)', () => {
  it("reads <sandbox>/<path> from the sandbox's folder, not from the root", async () => {
    const root = setup();
    const { result, model, events } = await run(root, evaluate(['input/deck.pdf']));
    expect(result.ok).toBe(true);
    const files = filesSentTo(model.requests, 'evaluator');
    expect(files.map((file) => [file.path, new TextDecoder().decode(file.data)])).toEqual([['input/deck.pdf', PDF]]);
    expect(events.find((event) => event.event === 'delegate.started')?.attachments).toEqual([
      { path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: PDF.length },
    ]);
  });

  it('leaves a path whose first segment is no sandbox to the root', async () => {
    const root = setup();
    const { result, model } = await run(root, evaluate(['deck.pdf']));
    expect(result.ok).toBe(true);
    const files = filesSentTo(model.requests, 'evaluator');
    expect(files.map((file) => new TextDecoder().decode(file.data))).toEqual(['%PDF-1.4 ROOT-DECK']);
  });

  it('refuses a suffix the sandbox does not allow, naming the sandbox, and starts no child', async () => {
    const root = setup();
    const { model, events } = await run(root, evaluate(['input/notes.txt']));
    expect(failure(events)).toMatchObject({ code: 'delegate_forbidden', message: expect.stringContaining('the sandbox "input"') });
    expect(model.requests.some((request) => request.requestName === 'evaluator')).toBe(false);
  });

  it("refuses a file above the sandbox's maxBytes with invalid_params naming it", async () => {
    const root = setup();
    const { events } = await run(root, evaluate(['input/big.pdf']));
    expect(failure(events)).toMatchObject({
      code: 'invalid_params',
      message: expect.stringMatching(/101 bytes, more than the 100 that the sandbox "input" allows/),
    });
  });

  it('refuses input/../deck.pdf although it would name a file inside the root', async () => {
    const root = setup();
    const { events } = await run(root, evaluate(['input/../deck.pdf']));
    expect(failure(events)).toMatchObject({ code: 'delegate_forbidden' });
  });

  it('refuses a sandbox whose folder is a symbolic link out of the root', async () => {
    const outside = tempDir('outside-');
    writeFileSync(join(outside, 'deck.pdf'), '%PDF-1.4 OUTSIDE');
    const root = setup({ path: './escape' });
    symlinkSync(outside, join(root, 'escape'));
    const { model, events } = await run(root, evaluate(['input/deck.pdf']));
    expect(failure(events)).toMatchObject({ code: 'delegate_forbidden' });
    expect(JSON.stringify(model.requests)).not.toContain('OUTSIDE');
  });
});

describe('attachments of worker_call (WRK-9)', () => {
  const create = { _tool: 'worker_create', name: 'critic', instructions: 'Criticise the deck.', description: 'A critic.' };
  const answers = (attachments: unknown) => [
    (request: ModelRequest) => (request.requestName === 'orchestrator' ? { calls: [create], output: null } : { calls: [], output: 'HARSH' }),
    (request: ModelRequest) =>
      request.requestName === 'orchestrator'
        ? { calls: [{ _tool: 'worker_call', worker: 'critic', input: 'the deck', attachments, _outputPath: '†state.critique' }], output: null }
        : { calls: [], output: 'HARSH' },
    (request: ModelRequest) => (request.requestName === 'orchestrator' ? { calls: [], output: 'done' } : { calls: [], output: 'HARSH' }),
  ];

  it('hands a created worker its attachments as messages and files, with only {input} as its input', async () => {
    const root = setup();
    const { result, model, events } = await run(root, answers(['input/deck.pdf']));
    expect(result.ok).toBe(true);
    const child = model.requests.find((request) => request.requestName === 'critic');
    expect(filesSentTo(model.requests, 'critic').map((file) => file.path)).toEqual(['input/deck.pdf']);
    const prompt = JSON.stringify(child?.messages.map((message) => message.content));
    expect(prompt).toContain('the deck');
    expect(prompt).toContain('input/deck.pdf');
    expect(prompt).not.toContain('PIPELINE-DECK');
    const started = events.find((event) => event.event === 'delegate.started' && event.name === 'critic');
    expect(started?.attachments).toEqual([{ path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: PDF.length }]);
  });

  it('is confined like any delegation: input/../deck.pdf is delegate_forbidden and the worker never runs', async () => {
    const root = setup();
    const { model, events } = await run(root, answers(['input/../deck.pdf']));
    expect(failure(events)).toMatchObject({ code: 'delegate_forbidden' });
    expect(model.requests.some((request) => request.requestName === 'critic')).toBe(false);
  });

  it('asks once per attachment when a tool rule requires approval of worker_call', async () => {
    const root = setup({}, { config: { toolRules: [{ tool: 'worker_call', approval: 'required' }] } });
    const asked: ConfirmRequest[] = [];
    const confirm: ConfirmHook = (request) => {
      asked.push(request);
      return { decision: 'approved' };
    };
    const { result } = await run(root, answers(['input/deck.pdf', 'deck.pdf']), confirm);
    expect(result.ok).toBe(true);
    expect(asked.filter((request) => 'path' in request.call).map((request) => request.call)).toEqual([
      { _tool: 'critic', path: 'input/deck.pdf', bytes: PDF.length, target: 'critic' },
      { _tool: 'critic', path: 'deck.pdf', bytes: 18, target: 'critic' },
    ]);
  });

  it("keeps the caller's policy over a created worker's: maxCount 1 refuses two files", async () => {
    const root = setup({}, { config: { attachments: { maxCount: 1 } } });
    const { events } = await run(root, answers(['input/deck.pdf', 'deck.pdf']));
    expect(failure(events)).toMatchObject({ code: 'invalid_params', side: 'caller', rule: 'maxCount' });
  });
});
