/** A journaled run tree resumed from any prefix of its journal ends as the uninterrupted run did (spec/journal.md JOURNAL-4 to JOURNAL-6, JOURNAL-9). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { BOSS, TreeScript, journalRuntime, memoryJournal } from '../helpers/journal-tree.js';

function count(events: readonly TraceEvent[], name: string): number {
  return events.filter((event) => event.event === name).length;
}

describe('resuming a journal', () => {
  const fullRun = async () => {
    const log: string[] = [];
    const journal = memoryJournal();
    const model = new TreeScript();
    const result = await journalRuntime(log).run(BOSS, { model, journal, maxSteps: 4 });
    return { result, events: journal.appended, log, model };
  };

  it('from any prefix gives the uninterrupted output and usage, asks no journaled answer again and runs no finished call again', async () => {
    const full = await fullRun();
    expect(full.result.ok).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: full.events.length }), async (cut) => {
        const prefix = full.events.slice(0, cut);
        const log: string[] = [];
        const model = new TreeScript();
        const journal = memoryJournal(prefix);
        const runtime = journalRuntime(log);
        const resumed = await runtime.resume(journal, { model, request: runtime.validate(BOSS) });
        expect(resumed.ok).toBe(true);
        if (!resumed.ok || !full.result.ok) return;
        expect(resumed.output).toEqual(full.result.output);
        const { ms: _a, ...total } = resumed.usageTotal;
        const { ms: _b, ...expected } = full.result.usageTotal;
        expect(total).toEqual(expected);
        // Every answer is paid once: asked before the cut, or now.
        expect(model.requests.length).toBe(full.model.requests.length - count(prefix, 'model.response'));
        // Answers of a child whose delegation finished are not needed again: at most the journal's are replayed.
        expect(count(journal.appended, 'model.replayed')).toBeLessThanOrEqual(count(prefix, 'model.response'));
        // Every execution of the Activity that finished before the cut is not run again.
        expect(log.length).toBe(full.log.length - prefix.filter((event) => event.event === 'call.completed' && event.tool === 'note').length);
        // The journal now holds the whole tree: resumed again, nothing is asked or run.
        const again = memoryJournal([...prefix, ...journal.appended]);
        const secondLog: string[] = [];
        const second = new TreeScript();
        const secondRuntime = journalRuntime(secondLog);
        const twice = await secondRuntime.resume(again, { model: second, request: secondRuntime.validate(BOSS) });
        expect(twice.ok && twice.output).toEqual(full.result.output);
        expect(second.requests).toHaveLength(0);
        expect(secondLog).toHaveLength(0);
      }),
      { numRuns: 12 },
    );
  });
});
