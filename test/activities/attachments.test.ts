/** Tests of src/activities/attachments.ts: confinement (ATT-2), caller-then-callee policies (ATT-3), one approval per attachment (ATT-4), the child's `attachment` messages (ATT-5). */
import { mkdirSync, mkdtempSync, type Stats, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readAttachmentFile } from '../../src/activities/attachment-path.js';
import { type AttachmentCall, MAX_INLINE_TEXT_BYTES, attachmentRecords, prepareAttachments } from '../../src/activities/attachments.js';
import type { ProtocolError } from '../../src/protocol/errors.js';
import type { ConfirmDecision, ConfirmHook, ConfirmRequest } from '../../src/protocol/contracts.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { RequestDocument } from '../../src/protocol/types.js';

/** A root with `input/deck.pdf` (120 bytes), `input/notes.txt`, `input/photo.png`, a `secret.pdf` beside `input`, and a folder outside the root. */
function fixture() {
  const base = mkdtempSync(join(tmpdir(), 'attach-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'input'), { recursive: true });
  writeFileSync(join(root, 'input', 'deck.pdf'), Buffer.alloc(120, 1));
  writeFileSync(join(root, 'input', 'notes.txt'), 'hello notes');
  writeFileSync(join(root, 'input', 'photo.png'), Buffer.alloc(30, 2));
  writeFileSync(join(root, 'secret.pdf'), 'secret');
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'leak.txt'), 'leak');
  return { base, root };
}

const callee = (attachments?: Record<string, unknown>): RequestDocument => ({
  context: [],
  schema: true,
  ...(attachments === undefined ? {} : { config: { attachments } }),
});

function callFor(root: string, over: Partial<AttachmentCall> = {}): AttachmentCall {
  return {
    run: { id: 'r1', name: 'caller', location: join(root, 'caller.json'), depth: 0, parent: null, trusted: true, model: undefined },
    caller: undefined,
    callee: callee({ maxCount: 5 }),
    target: 'evaluator',
    callId: 'c1',
    tool: { type: 'object' },
    root,
    ...over,
  };
}

async function failure(promise: Promise<unknown>): Promise<ProtocolError> {
  try {
    await promise;
  } catch (error) {
    return error as ProtocolError;
  }
  throw new Error('expected a failure');
}

describe('confinement (ATT-2)', () => {
  it('refuses input/../secret.pdf even though it stays inside the root', async () => {
    const { root } = fixture();
    const error = await failure(prepareAttachments(callFor(root), ['input/../secret.pdf']));
    expect(error.code).toBe('delegate_forbidden');
    expect(error.message).toContain('".."');
  });

  it.each([
    ['/etc/passwd', 'absolute'],
    ['C:/x.pdf', 'absolute'],
    ['input/%2e%2e/secret.pdf', '%'],
    ['input\\deck.pdf', 'backslash'],
    ['input/deck.pdf\0', 'NUL'],
    ['', 'empty'],
    ['input//deck.pdf', 'empty segment'],
  ])('refuses %j (%s)', async (path, reason) => {
    const { root } = fixture();
    const error = await failure(prepareAttachments(callFor(root), [path]));
    expect(error.code).toBe('delegate_forbidden');
    expect(error.message).toContain(reason);
  });

  it('refuses a symlink that leads out of the root, and reads one that stays inside', async () => {
    const { base, root } = fixture();
    symlinkSync(join(base, 'outside', 'leak.txt'), join(root, 'input', 'leak.txt'));
    symlinkSync(join(root, 'input', 'notes.txt'), join(root, 'input', 'alias.txt'));
    const error = await failure(prepareAttachments(callFor(root), ['input/leak.txt']));
    expect(error.code).toBe('delegate_forbidden');
    const [alias] = await prepareAttachments(callFor(root), ['input/alias.txt']);
    expect(alias?.message.data).toMatchObject({ path: 'input/alias.txt', text: 'hello notes' });
  });

  it('answers invalid_params for attachments that are not an array of paths (ATT-1)', async () => {
    const { root } = fixture();
    expect((await failure(prepareAttachments(callFor(root), 'input/deck.pdf' as unknown as string[]))).code).toBe('invalid_params');
    expect((await failure(prepareAttachments(callFor(root), [3] as unknown as string[]))).code).toBe('invalid_params');
  });

  it('answers invalid_params for a path that names no file', async () => {
    const { root } = fixture();
    expect((await failure(prepareAttachments(callFor(root), ['input/none.pdf']))).code).toBe('invalid_params');
    expect((await failure(prepareAttachments(callFor(root), ['input']))).code).toBe('invalid_params');
  });

  it('places <sandbox>/… paths through the locator, confined to the sandbox', async () => {
    const { base, root } = fixture();
    const locate = (segments: readonly string[]) => (segments[0] === 'box' ? { root: join(base, 'outside'), segments: segments.slice(1) } : undefined);
    const [leak] = await prepareAttachments(callFor(root, { locate }), ['box/leak.txt']);
    expect(leak?.message.data).toMatchObject({ path: 'box/leak.txt', text: 'leak' });
    expect((await failure(prepareAttachments(callFor(root, { locate }), ['box/../root/secret.pdf']))).code).toBe('delegate_forbidden');
  });
});

describe('policies, caller then callee (ATT-3)', () => {
  const cases: [string, Record<string, unknown> | undefined, Record<string, unknown> | undefined, string[], string, string][] = [
    ['caller maxCount', { maxCount: 1 }, { maxCount: 5 }, ['input/deck.pdf', 'input/notes.txt'], 'caller', 'maxCount'],
    ['callee maxCount', { maxCount: 5 }, { maxCount: 1 }, ['input/deck.pdf', 'input/notes.txt'], 'callee', 'maxCount'],
    ['callee without a policy accepts none', undefined, undefined, ['input/notes.txt'], 'callee', 'maxCount'],
    ['caller maxBytes in total', { maxBytes: 125 }, { maxCount: 5 }, ['input/deck.pdf', 'input/notes.txt'], 'caller', 'maxBytes'],
    ['callee maxBytes in total', undefined, { maxCount: 5, maxBytes: 100 }, ['input/deck.pdf'], 'callee', 'maxBytes'],
    ['caller allowSuffixes', { allowSuffixes: ['.pdf'] }, { maxCount: 5 }, ['input/notes.txt'], 'caller', 'allowSuffixes'],
    ['callee allowSuffixes', undefined, { maxCount: 5, allowSuffixes: ['.PDF'] }, ['input/notes.txt'], 'callee', 'allowSuffixes'],
    ['caller denySuffixes', { denySuffixes: ['.pdf'] }, { maxCount: 5 }, ['input/deck.pdf'], 'caller', 'denySuffixes'],
    ['callee denySuffixes', undefined, { maxCount: 5, denySuffixes: ['.PDF'] }, ['input/deck.pdf'], 'callee', 'denySuffixes'],
    ['caller first when both refuse', { maxCount: 0 }, { maxCount: 0 }, ['input/deck.pdf'], 'caller', 'maxCount'],
  ];
  it.each(cases)('%s', async (_name, callerPolicy, calleePolicy, paths, side, rule) => {
    const { root } = fixture();
    const call = callFor(root, { caller: callee(callerPolicy), callee: callee(calleePolicy) });
    const error = await failure(prepareAttachments(call, paths));
    expect(error.code).toBe('invalid_params');
    expect(error.data).toMatchObject({ side, rule });
    expect(error.message).toContain(`${side}'s config.attachments.${rule}`);
  });

  it('refuses a 3 GiB file by its size, unread, when it would pass the smaller maxBytes', async () => {
    const { root } = fixture();
    const huge = join(root, 'input', 'huge.pdf');
    writeFileSync(huge, '');
    truncateSync(huge, 3 * 1024 ** 3);
    const call = callFor(root, { caller: callee({ maxBytes: 10_000_000 }), callee: callee({ maxCount: 5, maxBytes: 200 }) });
    const error = await failure(prepareAttachments(call, ['input/deck.pdf', 'input/huge.pdf']));
    expect(error.code).toBe('invalid_params');
    expect(error.data).toMatchObject({ side: 'caller', rule: 'maxBytes' });
    expect(error.message).toContain(`${120 + 3 * 1024 ** 3} bytes in total`);
  });

  it('passes files within both policies', async () => {
    const { root } = fixture();
    const call = callFor(root, {
      caller: callee({ maxCount: 2, maxBytes: 131, allowSuffixes: ['.pdf', '.txt'] }),
      callee: callee({ maxCount: 2, denySuffixes: ['.exe'] }),
    });
    const prepared = await prepareAttachments(call, ['input/deck.pdf', 'input/notes.txt']);
    expect(attachmentRecords(prepared)).toEqual([
      { path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: 120 },
      { path: 'input/notes.txt', mediaType: 'text/plain', bytes: 11 },
    ]);
  });
});

describe('approval per attachment (ATT-4)', () => {
  function recordingHook(decide: (request: ConfirmRequest) => ConfirmDecision = () => ({ decision: 'approved' })) {
    const asked: ConfirmRequest[] = [];
    const hook: ConfirmHook = (request) => {
      asked.push(request);
      return decide(request);
    };
    return { asked, hook };
  }

  it('asks once per attachment with path, bytes and target when the callee policy requires it', async () => {
    const { root } = fixture();
    const { asked, hook } = recordingHook();
    await prepareAttachments(callFor(root, { callee: callee({ maxCount: 5, approval: 'required' }), confirm: hook }), ['input/deck.pdf', 'input/notes.txt']);
    expect(asked.map((request) => request.call)).toEqual([
      { _tool: 'evaluator', path: 'input/deck.pdf', bytes: 120, target: 'evaluator' },
      { _tool: 'evaluator', path: 'input/notes.txt', bytes: 11, target: 'evaluator' },
    ]);
  });

  it('asks when the caller policy or a tool rule requires it, and never otherwise', async () => {
    const { root } = fixture();
    const caller = recordingHook();
    await prepareAttachments(callFor(root, { caller: callee({ approval: 'required' }), confirm: caller.hook }), ['input/deck.pdf']);
    expect(caller.asked).toHaveLength(1);
    const rule = recordingHook();
    await prepareAttachments(callFor(root, { approvalRequired: true, confirm: rule.hook }), ['input/deck.pdf']);
    expect(rule.asked).toHaveLength(1);
    const none = recordingHook();
    await prepareAttachments(callFor(root, { confirm: none.hook }), ['input/deck.pdf']);
    expect(none.asked).toHaveLength(0);
  });

  it('stops waiting for an approval that never comes once the run is cancelled', async () => {
    const { root } = fixture();
    const controller = new AbortController();
    const never: ConfirmHook = () => new Promise<ConfirmDecision>(() => undefined);
    const preparing = prepareAttachments(callFor(root, { callee: callee({ maxCount: 5, approval: 'required' }), confirm: never, signal: controller.signal }), [
      'input/deck.pdf',
    ]);
    setTimeout(() => controller.abort(), 10);
    expect((await failure(preparing)).code).toBe('cancelled_by_user');
  });

  it('a rejected attachment fails the call with rejected_by_user naming it', async () => {
    const { root } = fixture();
    const { hook } = recordingHook((request) =>
      request.call.path === 'input/notes.txt' ? { decision: 'rejected', reason: 'private' } : { decision: 'approved' },
    );
    const error = await failure(
      prepareAttachments(callFor(root, { callee: callee({ maxCount: 5, approval: 'required' }), confirm: hook }), ['input/deck.pdf', 'input/notes.txt']),
    );
    expect(error.code).toBe('rejected_by_user');
    expect(error.message).toContain('input/notes.txt');
    expect(error.message).toContain('private');
  });
});

describe("the child's attachment messages (ATT-5)", () => {
  it('inlines text, leaves images and PDFs without text, and caps inline text', async () => {
    const { root } = fixture();
    writeFileSync(join(root, 'input', 'big.md'), 'x'.repeat(MAX_INLINE_TEXT_BYTES + 5));
    const prepared = await prepareAttachments(callFor(root), ['input/notes.txt', 'input/photo.png', 'input/deck.pdf', 'input/big.md']);
    expect(prepared.map((attachment) => attachment.message.data)).toEqual([
      { path: 'input/notes.txt', mediaType: 'text/plain', bytes: 11, text: 'hello notes' },
      { path: 'input/photo.png', mediaType: 'image/png', bytes: 30 },
      { path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: 120 },
      { path: 'input/big.md', mediaType: 'text/markdown', bytes: MAX_INLINE_TEXT_BYTES + 5, text: 'x'.repeat(MAX_INLINE_TEXT_BYTES), truncated: true },
    ]);
    expect(prepared[1]?.content.byteLength).toBe(30);
  });

  it('a child given the messages sees every attachment under †attachment, in order', async () => {
    const { root } = fixture();
    const prepared = await prepareAttachments(callFor(root), ['input/notes.txt', 'input/deck.pdf']);
    const child: RequestDocument = {
      context: [
        ...prepared.map((attachment) => attachment.message),
        { type: 'tool', tool: { echo: { type: 'object', properties: { _output: true } } } },
        { type: 'plan', mode: 'eager', calls: [{ _tool: 'echo', _output: '†attachment', _outputPath: '†output' }] },
      ],
      schema: true,
    };
    const result = await new Runtime().registerActivity('echo', (call) => call._output).run(child);
    expect(result.ok && result.output).toEqual([
      { path: 'input/notes.txt', mediaType: 'text/plain', bytes: 11, text: 'hello notes' },
      { path: 'input/deck.pdf', mediaType: 'application/pdf', bytes: 120 },
    ]);
  });
});

describe('readAttachmentFile and a sandbox limit (ATT-2)', () => {
  it('refuses a file that grew past maxBytes after its size was looked at, reading no further than the limit', async () => {
    const root = mkdtempSync(join(tmpdir(), 'attachment-grown-'));
    writeFileSync(join(root, 'big.pdf'), 'x'.repeat(500));
    // The look says 10 bytes, as it would have said just before the file grew.
    const probe = await open(join(root, 'big.pdf'));
    const prototype = Object.getPrototypeOf(probe) as { stat: (...args: unknown[]) => Promise<Stats> };
    await probe.close();
    const stat = prototype.stat;
    const spy = vi.spyOn(prototype, 'stat').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      const stats = await stat.apply(this, args);
      return Object.assign(stats, { size: 10 });
    });
    try {
      const error = await readAttachmentFile(root, 'big.pdf', () => ({
        root,
        segments: ['big.pdf'],
        limit: { maxBytes: 100, rule: 'the sandbox "input"' },
      })).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'invalid_params', data: { path: 'big.pdf', bytes: 101, maxBytes: 100 } });
    } finally {
      spy.mockRestore();
    }
  });
});
