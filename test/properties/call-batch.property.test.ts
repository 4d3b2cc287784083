/**
 * Property tests of CallBatch (PLAN-3, PLAN-4, PLAN-9): on random dependency graphs it reaches the
 * same outcome as a naive scheduler that compares every pair of calls, never starts a call before
 * a writer it depends on has ended, and prepares each call a bounded number of times (its work is
 * linear in calls plus dependencies).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BatchEntry, type BatchHooks, CallBatch } from '../../src/protocol/call-batch.js';
import { ContextStore } from '../../src/protocol/data-store.js';
import { CallError, type ProtocolError } from '../../src/protocol/errors.js';
import { dependsOn, findCycle } from '../../src/protocol/plan-graph.js';
import type { Call } from '../../src/protocol/types.js';
import { makeWrite, parseOutputPath, type Reference, resolveValue } from '../../src/protocol/variables.js';

const fcOptions = { seed: Number(process.env.FC_SEED ?? 42), numRuns: Number(process.env.FC_NUM_RUNS ?? 200) };

/** Paths that overlap at different depths, so dependencies come from prefixes as well as equal paths. */
const PATHS = ['†state.a', '†state.a.x', '†state.a.y', '†state.b', '†state.b.x', '†data.c', '†state.missing'];
const INSTANCES = [undefined, 'i1', 'i2'];

interface Spec {
  reads: number[];
  write: number | null;
  instance: number;
  fails: boolean;
}

const specArbitrary: fc.Arbitrary<Spec> = fc.record({
  reads: fc.uniqueArray(fc.nat({ max: PATHS.length - 1 }), { maxLength: 2 }),
  write: fc.option(fc.nat({ max: PATHS.length - 2 }), { nil: null }),
  instance: fc.nat({ max: INSTANCES.length - 1 }),
  fails: fc.boolean(),
});

function callsOf(specs: Spec[]): Call[] {
  return specs.map((spec, index) => {
    const call: Call = { _tool: spec.fails ? 'explode' : 't', _id: `c${index}`, result: index };
    spec.reads.forEach((read, position) => {
      call[`r${position}`] = PATHS[read] as string;
    });
    if (spec.write !== null) call._outputPath = PATHS[spec.write] as string;
    const instance = INSTANCES[spec.instance];
    if (instance !== undefined) call._instance = instance;
    return call;
  });
}

/** Hooks over a real context store: `explode` calls fail when prepared; others write their `result`. */
function hooksFor(
  store: ContextStore,
  outcome: Map<string, string>,
  starts: string[],
  counters: { prepares: number },
  check?: (entry: BatchEntry) => void,
): BatchHooks {
  return {
    prepare(entry) {
      counters.prepares++;
      if (entry.call._tool === 'explode') throw new CallError('unknown_tool', 'There is no tool named "explode".');
      const { _outputPath, ...rest } = entry.call;
      const resolution = resolveValue(rest, (reference) => store.read(reference, entry.call._instance));
      if (resolution.status === 'blocked') return resolution;
      return { status: 'ready', call: resolution.value as Call };
    },
    async execute(entry) {
      check?.(entry);
      starts.push(entry.id);
      await Promise.resolve();
      const path = typeof entry.call._outputPath === 'string' ? parseOutputPath(entry.call._outputPath) : undefined;
      for (const target of path?.targets ?? [])
        store.append(
          makeWrite(target, entry.call.result, { call: entry.id, ...(entry.call._instance === undefined ? {} : { instance: entry.call._instance as string }) }),
        );
      outcome.set(entry.id, 'ran');
    },
    fail(entry, error: ProtocolError) {
      outcome.set(entry.id, `${error.code}${(error.data as { cycle?: unknown }).cycle ? ' (cycle)' : ''}`);
    },
  };
}

/** The scheduler as it was first written: every pending call compared with every unfinished one, every time. */
async function naiveSchedule(calls: Call[], hooks: BatchHooks): Promise<void> {
  const pending = calls.map((call) => ({ id: call._id as string, call }));
  let running = 0;
  await new Promise<void>((done) => {
    const pump = (): void => {
      let progressed = true;
      while (progressed) {
        progressed = false;
        for (const entry of [...pending]) {
          if (pending.some((other) => other !== entry && dependsOn(entry.call, other.call)) || runningCalls.some((other) => dependsOn(entry.call, other)))
            continue;
          let prepared: ReturnType<BatchHooks['prepare']>;
          try {
            prepared = hooks.prepare(entry);
          } catch (error) {
            pending.splice(pending.indexOf(entry), 1);
            hooks.fail(entry, error as ProtocolError);
            progressed = true;
            continue;
          }
          if (prepared.status === 'blocked') continue;
          pending.splice(pending.indexOf(entry), 1);
          running++;
          runningCalls.push(entry.call);
          void hooks.execute(entry, prepared.call).finally(() => {
            running--;
            runningCalls.splice(runningCalls.indexOf(entry.call), 1);
            pump();
          });
          progressed = true;
        }
        if (!progressed && running === 0 && pending.length > 0) {
          const cycle = findCycle(pending.map((entry) => entry.call));
          const stuck = cycle
            ? cycle.map((index) => pending[index]!)
            : pending.filter((entry) => !pending.some((other) => other !== entry && dependsOn(entry.call, other.call)));
          for (const entry of stuck) {
            pending.splice(pending.indexOf(entry), 1);
            const missing: Reference[] = [];
            hooks.fail(entry, new CallError('unresolved_reference', 'stuck', cycle ? { cycle: [] } : { missing }));
          }
          progressed = true;
        }
      }
      if (running === 0 && pending.length === 0) done();
    };
    const runningCalls: Call[] = [];
    queueMicrotask(pump);
  });
}

async function withBatch(calls: Call[], checkOrder = true) {
  const store = new ContextStore();
  const outcome = new Map<string, string>();
  const starts: string[] = [];
  const counters = { prepares: 0 };
  const unfinished = new Set(calls.map((call) => call._id as string));
  const violations: string[] = [];
  const hooks = hooksFor(
    store,
    outcome,
    starts,
    counters,
    checkOrder
      ? (entry) => {
          // No call starts while a call it depends on has not ended (PLAN-3).
          for (const other of calls)
            if (unfinished.has(other._id as string) && dependsOn(entry.call, other)) violations.push(`${entry.id} before ${String(other._id)}`);
        }
      : undefined,
  );
  const batch = new CallBatch({
    ...hooks,
    async execute(entry, call) {
      await hooks.execute(entry, call);
      unfinished.delete(entry.id);
    },
    fail(entry, error) {
      hooks.fail(entry, error);
      unfinished.delete(entry.id);
    },
  });
  batch.addAll(calls.map((call) => ({ id: call._id as string, call })));
  batch.close();
  await batch.settled();
  return { outcome, store, counters, violations, examined: batch.examined };
}

describe('CallBatch on random dependency graphs (PLAN-3, PLAN-4, PLAN-9)', () => {
  it('ends every call as the naive scheduler does, and never starts a reader before its writer ends', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(specArbitrary, { minLength: 1, maxLength: 9 }), async (specs) => {
        const calls = callsOf(specs);
        const fast = await withBatch(calls);
        const naiveStore = new ContextStore();
        const naiveOutcome = new Map<string, string>();
        await naiveSchedule(calls, hooksFor(naiveStore, naiveOutcome, [], { prepares: 0 }));
        expect(fast.violations).toEqual([]);
        expect(Object.fromEntries(fast.outcome)).toEqual(Object.fromEntries(naiveOutcome));
        expect(fast.outcome.size).toBe(calls.length);
      }),
      fcOptions,
    );
  });

  it('prepares each call once and does work linear in calls plus dependencies when the batch writes all it reads', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }).chain((size) =>
          fc.tuple(
            ...Array.from({ length: size }, (_, node) =>
              node === 0
                ? fc.constant([] as number[])
                : fc.subarray(
                    Array.from({ length: node }, (_, j) => j),
                    { maxLength: Math.min(3, node) },
                  ),
            ),
          ),
        ),
        async (deps) => {
          const calls: Call[] = deps.map((reads, node) => ({
            _tool: 't',
            _id: `c${node}`,
            result: node,
            _outputPath: `†state.v${node}`,
            ...Object.fromEntries(reads.map((dep, position) => [`r${position}`, `†state.v${dep}`])),
          }));
          const { counters, outcome, examined } = await withBatch(calls);
          expect([...outcome.values()].every((value) => value === 'ran')).toBe(true);
          expect(counters.prepares).toBe(calls.length);
          // Each dependency is found once when its reader or writer is added and once when the writer ends.
          const dependencies = deps.reduce((sum, reads) => sum + reads.length, 0);
          expect(examined).toBeLessThanOrEqual(calls.length + 2 * dependencies);
        },
      ),
      fcOptions,
    );
  });

  it('schedules a chain of 5,000 calls written in reverse, preparing each call once', async () => {
    const calls: Call[] = Array.from({ length: 5000 }, (_, node) => ({
      _tool: 't',
      _id: `c${node}`,
      result: node,
      _outputPath: `†state.v${node}`,
      ...(node === 0 ? {} : { previous: `†state.v${node - 1}` }),
    }));
    const { counters, outcome, examined } = await withBatch(calls.slice().reverse(), false);
    expect(outcome.size).toBe(5000);
    expect([...outcome.values()].every((value) => value === 'ran')).toBe(true);
    expect(counters.prepares).toBe(5000);
    expect(examined).toBeLessThanOrEqual(5000 + 2 * 4999);
  });
});
