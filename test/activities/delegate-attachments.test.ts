/** A delegating call with attachments end to end (ATT-1, ATT-5, ATT-6, ATT-7): the child sees their messages, its model gets images and PDFs as files, the trace keeps no bytes. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import type { ConfirmHook, ConfirmRequest } from '../../src/protocol/contracts.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { deckRoot } from '../helpers/deck-root.js';
import { stepModel } from '../helpers/step-model.js';

const PDF = '%PDF-1.4 SECRET-PDF-BYTES';

/** A root with a caller delegating to `./evaluator.json`, which accepts attachments by `policy`, and three files under `input/`. */
function setup(policy: Record<string, unknown> | undefined, caller: Record<string, unknown> = {}, toolMeta: Record<string, unknown> = {}) {
  return deckRoot({ ...(policy === undefined ? {} : { policy }), caller, toolMeta, pdf: PDF });
}

async function run(root: string, attachments: unknown, confirm?: ConfirmHook) {
  const runtime = createRuntime({ root });
  const model = stepModel(
    (request) =>
      request.requestName === 'caller'
        ? { calls: [{ _tool: 'evaluate', focus: 'market', attachments, _outputPath: '†output' }], output: null }
        : { calls: [], output: 'solid deck' },
    (request) => (request.requestName === 'caller' ? { calls: [], output: 'done' } : { calls: [], output: 'solid deck' }),
  );
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'caller.json')), { model, tracer: new Tracer([sink]), ...(confirm ? { confirm } : {}) });
  return { result, model, events: sink.events };
}

describe('attachments on a delegating call', () => {
  it('gives the child its attachments as messages and native files, not as input, and traces them without bytes', async () => {
    const root = setup({ maxCount: 2, allowSuffixes: ['.pdf', '.txt'] });
    const { result, model, events } = await run(root, ['input/deck.pdf', 'input/notes.txt']);
    expect(result.ok).toBe(true);
    const child = model.requests.find((request) => request.requestName === 'evaluator');
    const users = child?.messages.filter((message) => message.role === 'user') ?? [];
    const prompt = JSON.stringify(child?.messages.map((message) => message.content));
    expect(prompt).toContain('growth 40% a month');
    expect(prompt).toContain('input/deck.pdf');
    expect(prompt).toContain('market');
    expect(prompt).not.toContain('SECRET-PDF-BYTES');
    const files = users.flatMap((message) => message.files ?? []);
    expect(files.map((file) => [file.path, file.mediaType, new TextDecoder().decode(file.data)])).toEqual([['input/deck.pdf', 'application/pdf', PDF]]);
    expect(users[0]?.files).toHaveLength(1);
    const started = events.find((event) => event.event === 'delegate.started');
    expect(started?.attachments).toEqual([
      { path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: PDF.length },
      { path: 'input/notes.txt', mediaType: 'text/plain', bytes: 18 },
    ]);
    const trace = JSON.stringify(events);
    expect(trace).not.toContain('SECRET-PDF-BYTES');
    expect(trace).not.toContain(Buffer.from(PDF).toString('base64'));
    const childRequest = events.find((event) => event.event === 'model.request' && event.depth === 1);
    expect(JSON.stringify(childRequest?.messages)).toContain('"files":[{"path":"input/deck.pdf","mediaType":"application/pdf","bytes":25}]');
  });

  it('refuses input/../secret.pdf with delegate_forbidden before any child starts', async () => {
    const root = setup({ maxCount: 2 });
    const { model, events } = await run(root, ['input/../secret.pdf']);
    expect(model.requests.some((request) => request.requestName === 'evaluator')).toBe(false);
    const failed = events.find((event) => event.event === 'call.failed');
    expect(failed?.error).toMatchObject({ code: 'delegate_forbidden' });
    expect(events.some((event) => event.event === 'delegate.started')).toBe(false);
  });

  it("applies the caller's policy before the callee's", async () => {
    const root = setup({ maxCount: 1 }, { denySuffixes: ['.pdf'] });
    const { events } = await run(root, ['input/deck.pdf', 'input/notes.txt']);
    expect(events.find((event) => event.event === 'call.failed')?.error).toMatchObject({
      code: 'invalid_params',
      side: 'caller',
      rule: 'denySuffixes',
    });
  });

  it('asks once per attachment with path, bytes and target when the callee requires approval', async () => {
    const root = setup({ maxCount: 2, approval: 'required' });
    const asked: ConfirmRequest[] = [];
    const confirm: ConfirmHook = (request) => {
      asked.push(request);
      return { decision: 'approved' };
    };
    const { result } = await run(root, ['input/deck.pdf', 'input/notes.txt'], confirm);
    expect(result.ok).toBe(true);
    const attachmentAsks = asked.filter((request) => 'path' in request.call);
    expect(attachmentAsks.map((request) => request.call)).toEqual([
      { _tool: 'evaluate', path: 'input/deck.pdf', bytes: PDF.length, target: 'evaluate' },
      { _tool: 'evaluate', path: 'input/notes.txt', bytes: 18, target: 'evaluate' },
    ]);
  });

  it("puts the attachments to the approval policy's hook even though the delegating tool asks no approval itself", async () => {
    const root = setup({ maxCount: 2, approval: 'required' });
    const { model, events } = await run(root, ['input/deck.pdf'], createApprovalHook({ mode: 'strict' }));
    expect(events.find((event) => event.event === 'call.failed')?.error).toMatchObject({ code: 'rejected_by_user', path: 'input/deck.pdf' });
    expect(model.requests.some((request) => request.requestName === 'evaluator')).toBe(false);
    // The refusal is traced as any approval is (TRACE-8), so an audit sees what was not shared.
    const approvals = events.filter((event) => event.event.startsWith('approval.'));
    expect(approvals).toEqual([
      expect.objectContaining({ event: 'approval.requested', tool: 'evaluate', params: { path: 'input/deck.pdf', bytes: PDF.length, target: 'evaluate' } }),
      expect.objectContaining({
        event: 'approval.decided',
        tool: 'evaluate',
        decision: 'rejected',
        by: 'policy:strict',
        reason: expect.stringContaining('strict'),
      }),
    ]);
    expect(approvals[0]?.call).toBe(events.find((event) => event.event === 'call.failed')?.call);
  });

  it('asks for each attachment when the delegating tool requires approval, after the call itself', async () => {
    const root = setup({ maxCount: 2 }, {}, { _approval: 'required' });
    const asked: ConfirmRequest[] = [];
    const confirm: ConfirmHook = Object.assign(
      (request: ConfirmRequest) => {
        asked.push(request);
        return { decision: 'approved' as const };
      },
      { appliesTo: createApprovalHook({ mode: 'approve_all' }).appliesTo },
    );
    const { result } = await run(root, ['input/deck.pdf', 'input/notes.txt'], confirm);
    expect(result.ok).toBe(true);
    expect(asked.map((request) => request.call.path ?? request.call._tool)).toEqual(['evaluate', 'input/deck.pdf', 'input/notes.txt']);
  });

  it('leaves attachments as plain input when the callee declares no config.attachments', async () => {
    const root = setup(undefined);
    const { result, model } = await run(root, ['input/../secret.pdf']);
    expect(result.ok).toBe(true);
    const child = model.requests.find((request) => request.requestName === 'evaluator');
    expect(JSON.stringify(child?.messages)).toContain('input/../secret.pdf');
    expect(child?.messages.some((message) => message.files !== undefined)).toBe(false);
  });
});
