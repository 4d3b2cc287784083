/** A journaled tree resumed with its children run elsewhere (spec/queue.md QUEUE-13, QUEUE-16) ends as the uninterrupted run did, from any prefix of its journal: each child carries its subtree's journaled events as JSON and replays them by place, as in process. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../src/protocol/model.js';
import { runRemoteChild } from '../../src/protocol/run/remote-child.js';
import type { RemoteChild, RemoteChildRunner } from '../../src/protocol/contracts.js';
import type { Runtime } from '../../src/protocol/run/runtime.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { BOSS, TreeScript, journalRuntime, memoryJournal } from '../helpers/journal-tree.js';

function count(events: readonly TraceEvent[], name: string): number {
  return events.filter((event) => event.event === name).length;
}

/** Runs every child as a worker would: from its job's JSON alone, its events going to the tree's tracer (QUEUE-5). */
function jsonRunner(runtime: Runtime, model: Model, jobs: RemoteChild[]): RemoteChildRunner {
  return {
    run: (child, hooks) => {
      const job = JSON.parse(JSON.stringify(child)) as RemoteChild;
      jobs.push(job);
      return runRemoteChild(runtime, job, { model, signal: hooks.signal, tracer: hooks.tracer as NonNullable<typeof hooks.tracer> });
    },
  };
}

describe('resuming a journal with the children elsewhere', () => {
  it('from any prefix gives the uninterrupted output and usage, asking no journaled answer again, each job carrying its session and subtree', async () => {
    const fullLog: string[] = [];
    const fullJournal = memoryJournal();
    const fullModel = new TreeScript();
    const full = await journalRuntime(fullLog).run(BOSS, { model: fullModel, journal: fullJournal, maxSteps: 4 });
    expect(full.ok).toBe(true);
    const events = fullJournal.appended;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: events.length }), async (cut) => {
        const prefix = events.slice(0, cut);
        const log: string[] = [];
        const model = new TreeScript();
        const journal = memoryJournal(prefix);
        const runtime = journalRuntime(log);
        const jobs: RemoteChild[] = [];
        runtime.useChildRunner(jsonRunner(runtime, model, jobs));
        const resumed = await runtime.resume(journal, { model, request: runtime.validate(BOSS) });
        expect(resumed.ok).toBe(true);
        if (!resumed.ok || !full.ok) return;
        expect(resumed.output).toEqual(full.output);
        const { ms: _a, ...total } = resumed.usageTotal;
        const { ms: _b, ...expected } = full.usageTotal;
        expect(total).toEqual(expected);
        // Every answer is paid once: asked before the cut, or now.
        expect(model.requests.length).toBe(fullModel.requests.length - count(prefix, 'model.response'));
        expect(log.length).toBe(fullLog.length - prefix.filter((event) => event.event === 'call.completed' && event.tool === 'note').length);
        for (const job of jobs) {
          // The first resume is session 1; a job carries its own subtree's events and the resume marks, nothing else.
          expect(job.journal?.session).toBe(1);
          const inside = (job.journal?.events ?? []).filter((event) => event.event !== 'journal.resumed');
          expect(inside.every((event) => event.run === job.id)).toBe(true);
          expect(inside).toEqual(prefix.filter((event) => event.run === job.id));
        }
      }),
      { numRuns: 12 },
    );
  });
});
