/** Durable runs through the library (spec/journal.md): a journaled run tree resumed from any prefix of its journal. */
import { describe, expect, it } from 'vitest';
import { JournalReplay, journalSession } from '../../src/protocol/trace/journal.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { BOSS, TreeScript, journalRuntime, memoryJournal } from '../helpers/journal-tree.js';

/** The uninterrupted run: its journal, result, model and Activity log. */
async function fullRun() {
  const log: string[] = [];
  const journal = memoryJournal();
  const model = new TreeScript();
  const result = await journalRuntime(log).run(BOSS, { model, journal, maxSteps: 4 });
  return { result, events: journal.appended, log, model };
}

function count(events: readonly TraceEvent[], name: string): number {
  return events.filter((event) => event.event === name).length;
}

describe('a journaled run', () => {
  it('writes the trace with journal.started after run.started, and the request hash there (JOURNAL-2, JOURNAL-8)', async () => {
    const { result, events } = await fullRun();
    expect(result.ok).toBe(true);
    expect(events[0]).toMatchObject({ event: 'run.started', parent: null, requestHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(events[1]).toMatchObject({ event: 'journal.started', options: { maxSteps: 4 } });
    expect(count(events, 'run.started')).toBe(3);
  });

  it('gives child runs ids derived from their place in the tree, the same on every run (JOURNAL-6)', async () => {
    const log: string[] = [];
    const ids = async () => {
      const journal = memoryJournal();
      await journalRuntime(log).run(BOSS, { model: new TreeScript(), journal, runId: 'run_fixed000000' });
      return journal.appended
        .filter((event) => event.event === 'delegate.started')
        .map((event) => `${event.call}:${event.child}`)
        .sort();
    };
    const first = await ids();
    expect(first).toHaveLength(2);
    expect(await ids()).toEqual(first);
  });
});

describe('resuming a journal', () => {
  it('refuses a journal whose request changed, unless told to resume anyway (JOURNAL-8)', async () => {
    const full = await fullRun();
    const runtime = journalRuntime([]);
    const changed = runtime.validate({ ...BOSS, meta: { name: 'boss' }, context: [...BOSS.context, { type: 'system', text: 'Also be brief.' }] });
    const loaded = { ...changed, location: String(full.events[0]?.request) };
    await expect(runtime.resume(memoryJournal(full.events.slice(0, 4)), { model: new TreeScript(), request: loaded })).rejects.toThrow(
      /changed since the journal memory\.jsonl began.*--resume-changed/,
    );
    const resumed = await runtime.resume(memoryJournal(full.events.slice(0, 4)), { model: new TreeScript(), request: loaded, changed: true });
    expect(resumed.ok).toBe(true);
  });

  it('refuses an empty journal, naming it, and says a journal killed before its options were written has nothing to resume', async () => {
    const runtime = journalRuntime([]);
    await expect(runtime.resume(memoryJournal([]), { model: new TreeScript(), request: runtime.validate(BOSS) })).rejects.toThrow(
      /^The journal memory\.jsonl holds no run\.started of a top run: it is empty or was not written by a run with a journal\.$/,
    );
    const events = (await fullRun()).events.slice(0, 1);
    await expect(runtime.resume(memoryJournal(events), { model: new TreeScript(), request: runtime.validate(BOSS) })).rejects.toThrow(
      /or its run was killed before it wrote them, having done nothing yet, so start it again\.$/,
    );
  });

  it('refuses a trace written without a journal, naming it', async () => {
    const events = (await fullRun()).events.filter((event) => event.event !== 'journal.started');
    await expect(journalRuntime([]).resume(memoryJournal(events), { model: new TreeScript() })).rejects.toThrow(
      /memory\.jsonl has no journal\.started event: it is a trace \(--trace\), not a journal/,
    );
  });

  it('asks before running again a started call of an Activity that is not idempotent, and refuses it without a hook (JOURNAL-5)', async () => {
    const log: string[] = [];
    const journal = memoryJournal();
    await journalRuntime(log, { idempotent: false }).run(BOSS, { model: new TreeScript(), journal });
    const started = journal.appended.findIndex((event) => event.event === 'call.started' && event.tool === 'note' && event.parent === null);
    const prefix = journal.appended.slice(0, started + 1);
    const refused = memoryJournal(prefix);
    const refusedLog: string[] = [];
    const refusing = journalRuntime(refusedLog, { idempotent: false });
    const result = await refusing.resume(refused, { model: new TreeScript(), request: refusing.validate(BOSS) });
    expect(refusedLog).not.toContain('boss');
    const failed = refused.appended.find((event) => event.event === 'call.failed' && event.tool === 'note' && event.parent === null);
    expect(failed?.error).toMatchObject({
      code: 'rejected_by_user',
      message: expect.stringMatching(/had started when the run was interrupted.*not idempotent/),
    });
    expect(result.ok).toBe(true);

    const asked: string[] = [];
    const approvedLog: string[] = [];
    // A hook that applies to no call of its own accord is still asked about the rerun.
    const confirm = Object.assign(
      (request: { toolName: string; rerun?: boolean }) => {
        asked.push(`${request.toolName}:${request.rerun === true}`);
        return { decision: 'approved' as const };
      },
      { appliesTo: () => false },
    );
    const approving = journalRuntime(approvedLog, { idempotent: false });
    await approving.resume(memoryJournal(prefix), { model: new TreeScript(), confirm, request: approving.validate(BOSS) });
    expect(asked).toEqual(['note:true']);
    expect(approvedLog).toContain('boss');
  });
});

describe("a queued child's share of the journal (QUEUE-12, QUEUE-13)", () => {
  const at = (event: string, run: string, parent: string | null, extra: Record<string, unknown> = {}): TraceEvent => ({
    ts: '',
    event,
    run,
    parent,
    depth: 0,
    ...extra,
  });
  const events: TraceEvent[] = [
    at('run.started', 'top', null),
    at('run.started', 'child', 'top'),
    at('run.started', 'grandchild', 'child'),
    at('model.response', 'grandchild', 'child', { step: 0, attempt: 1 }),
    at('run.started', 'sibling', 'top'),
    at('journal.resumed', 'top', null),
    at('model.response', 'child', 'top', { step: 0, attempt: 1 }),
    at('model.response', 'sibling', 'top', { step: 0, attempt: 1 }),
  ];

  it("holds a child's subtree, its descendants' events included, its siblings' and ancestors' left out, with every resume mark", () => {
    const replay = new JournalReplay(events);
    expect(replay.subtree('child').map((event) => `${event.event} ${event.run}`)).toEqual([
      'run.started child',
      'run.started grandchild',
      'model.response grandchild',
      'journal.resumed top',
      'model.response child',
    ]);
    expect(replay.subtree('grandchild')).toHaveLength(3);
    expect(replay.subtree('unknown').map((event) => event.event)).toEqual(['journal.resumed']);
  });

  it('numbers sessions: 0 for a journal begun now, one more than the resumes it holds, or as a worker is told', () => {
    expect(journalSession([])).toBe(0);
    expect(journalSession(events)).toBe(2);
    expect(new JournalReplay(events).session).toBe(2);
    expect(new JournalReplay([], 3).session).toBe(3);
  });
});
