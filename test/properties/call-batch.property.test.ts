/**
 * Property tests of scheduling (PLAN-3, PLAN-4, PLAN-9): the indexed dependency graph, cycle search
 * and CallBatch do exactly what the naive quadratic versions do, with work bounded by the calls
 * and their dependencies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallBatch, type BatchHooks } from '../../src/protocol/calls/call-batch.js';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import { CallError } from '../../src/protocol/errors.js';
import { dependencyGraph, dependsOn, findCycle, overlaps, readsOf, writesOf } from '../../src/protocol/variables/plan-graph.js';
import type { Call } from '../../src/protocol/types.js';
import { type DataRecord, makeWrite } from '../../src/protocol/variables/data-records.js';
import { parseOutputPath, parseReference, type Reference } from '../../src/protocol/variables/references.js';
import { resolveValue } from '../../src/protocol/context/resolve-references.js';
import type { ReferencePath } from '../../src/protocol/variables/reference-index.js';
import { NaiveCallBatch, naiveFindCycle } from '../helpers/naive-call-batch.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

/** References that overlap in every way: prefixes, siblings, indices written as keys, other kinds. */
const REFERENCES = ['†state', '†state.a', '†state.a.b', '†state.a.c', '†state.b', '†state.b[0]', '†state.b.0.x', '†output.r', '†input.q', '†log'];
const INSTANCES = [undefined, 'fr', 'de'] as const;

/** One generated call: what it reads and writes, and how it behaves when it runs. */
interface CallSpec {
  reads: string[];
  write: string | undefined;
  /** A write it makes without declaring it (as an Activity appending a message would). */
  side: string | undefined;
  instance: (typeof INSTANCES)[number];
  /** Its prepare throws (an unknown tool). */
  explode: boolean;
  /** How many turns of the event loop it runs for. */
  delay: number;
  /** In which tick it is added (calls of a tick are scheduled together, LOOP-11). */
  tick: number;
}

interface Scenario {
  calls: CallSpec[];
  /** References that hold a value before the batch starts. */
  seeds: string[];
}

const reference = fc.constantFrom(...REFERENCES);
const readArbitrary = fc.oneof(
  reference,
  reference.map((text) => `got ${text}!`),
  fc.tuple(reference, reference).map(([a, b]) => `${a} || ${b}`),
  fc.tuple(reference, reference).map(([a, b]) => `${a} && ${b}`),
);
const writeArbitrary = fc.oneof(
  { weight: 4, arbitrary: reference },
  { weight: 1, arbitrary: fc.tuple(reference, reference).map(([a, b]) => `${a} && ${b}`) },
  { weight: 1, arbitrary: fc.tuple(reference, reference).map(([a, b]) => `${a} || ${b}`) },
);
const callArbitrary: fc.Arbitrary<CallSpec> = fc.record({
  reads: fc.array(readArbitrary, { maxLength: 3 }),
  write: fc.option(writeArbitrary, { nil: undefined, freq: 4 }),
  side: fc.option(reference, { nil: undefined, freq: 2 }),
  instance: fc.constantFrom(...INSTANCES),
  explode: fc.nat({ max: 9 }).map((draw) => draw === 0),
  delay: fc.nat({ max: 3 }),
  tick: fc.nat({ max: 2 }),
});
const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  calls: fc.array(callArbitrary, { minLength: 1, maxLength: 12 }),
  seeds: fc.subarray(REFERENCES, { maxLength: 3 }),
});

function callOf(spec: CallSpec, index: number): Call {
  return {
    _tool: spec.explode ? 'explode' : 't',
    // Half the calls have no _id: a cycle then names them by their position in the batch.
    ...(index % 2 === 0 ? { _id: `c${index}` } : {}),
    ...Object.fromEntries(spec.reads.map((read, position) => [`p${position}`, read])),
    ...(spec.write === undefined ? {} : { _outputPath: spec.write }),
    ...(spec.instance === undefined ? {} : { _instance: spec.instance }),
  };
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What a batch did: the events in order, and the records written while it ran. */
interface Outcome {
  log: string[];
  written: DataRecord[];
}

/** Runs a scenario through a scheduler over a real ContextStore: prepare resolves references, execute writes. */
async function runScenario(
  scenario: Scenario,
  make: (hooks: BatchHooks) => { add(entry: { id: string; call: Call }): void; close(): void; settled(): Promise<void> },
): Promise<Outcome & { batch: unknown }> {
  const store = new ContextStore();
  for (const seed of scenario.seeds) store.append(makeWrite(parseReference(seed)!, `seed ${seed}`, { call: 'seed', date: 'd' }));
  const log: string[] = [];
  const written: DataRecord[] = [];
  store.watch((record) => written.push(record));
  const specs = new Map(scenario.calls.map((spec, index) => [`c${index}`, spec]));
  const hooks: BatchHooks = {
    prepare(entry) {
      if (entry.call._tool === 'explode') throw new CallError('unknown_tool', 'There is no tool named "explode".', { toolName: 'explode', available: [] });
      const { _outputPath, ...rest } = entry.call;
      const resolution = resolveValue(rest, (read) => store.read(read, entry.call._instance));
      return resolution.status === 'blocked' ? resolution : { status: 'ready', call: resolution.value as Call };
    },
    async execute(entry, call) {
      const spec = specs.get(entry.id)!;
      log.push(`start ${entry.id} ${JSON.stringify(call)}`);
      for (let turn = 0; turn < spec.delay; turn++) await yieldTurn();
      const instance = entry.call._instance === undefined ? {} : { instance: entry.call._instance };
      const path = typeof entry.call._outputPath === 'string' ? parseOutputPath(entry.call._outputPath) : undefined;
      const targets = path?.op === 'or' ? path.targets.slice(0, 1) : (path?.targets ?? []);
      for (const target of targets) store.append(makeWrite(target, `value of ${entry.id}`, { call: entry.id, date: 'd', ...instance }));
      if (spec.side !== undefined) store.append(makeWrite(parseReference(spec.side)!, `side of ${entry.id}`, { call: entry.id, date: 'd', ...instance }));
      log.push(`end ${entry.id}`);
    },
    fail(entry, error) {
      log.push(`fail ${entry.id} ${error.code} ${error.message} ${JSON.stringify(error.data)}`);
    },
    watch: (listener) => store.watch(listener),
  };
  const batch = make(hooks);
  const ticks = Math.max(...scenario.calls.map((spec) => spec.tick));
  for (let tick = 0; tick <= ticks; tick++) {
    scenario.calls.forEach((spec, index) => {
      if (spec.tick === tick) batch.add({ id: `c${index}`, call: callOf(spec, index) });
    });
    await yieldTurn();
  }
  batch.close();
  await batch.settled();
  return { log, written, batch };
}

/** Overlapping (read, write) reference pairs between a call's reads and some references. */
function overlapPairs(reads: readonly Reference[], writes: readonly ReferencePath[]): number {
  let pairs = 0;
  for (const read of reads) for (const write of writes) if (overlaps(read, write as Reference)) pairs += 1;
  return pairs;
}

describe('dependencyGraph and findCycle (VAR-17, PLAN-4)', () => {
  it('give the same graph and the same cycle as comparing every pair of calls', () => {
    fc.assert(
      fc.property(fc.array(callArbitrary, { maxLength: 14 }), (specs) => {
        const calls = specs.map(callOf);
        const naive = calls.map((reader) => calls.flatMap((writer, index) => (dependsOn(reader, writer) ? [index] : [])));
        expect(dependencyGraph(calls)).toEqual(naive);
        expect(findCycle(calls)).toEqual(naiveFindCycle(calls));
      }),
      settings,
    );
  });
});

describe('CallBatch against the naive scheduler (CALL-6, VAR-5, PLAN-3, PLAN-4, PLAN-9)', () => {
  it('starts, resolves and fails every call exactly as the naive scheduler does, whatever the graph, ticks and timings', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const fast = await runScenario(scenario, (hooks) => new CallBatch(hooks));
        const naive = await runScenario(scenario, (hooks) => new NaiveCallBatch(hooks));
        expect(fast.log).toEqual(naive.log);
        expect(fast.written).toEqual(naive.written);
      }),
      settings,
    );
  });

  it('prepares each call a bounded number of times and examines no more candidates than there are dependencies', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const { written, batch } = await runScenario(scenario, (hooks) => new CallBatch(hooks));
        const calls = scenario.calls.map(callOf);
        const writes = calls.flatMap((call) => writesOf(call));
        let prepares = 0;
        let examined = 0;
        for (const call of calls) {
          const reads = readsOf(call);
          const visible = written.filter((record) => record.instance === undefined || record.instance === call._instance);
          const writers = calls.filter((other) => overlapPairs(reads, writesOf(other)) > 0).length;
          // Once when it may run, once more per write or declared writer it waited for, once when it fails stuck.
          prepares += 2 + writers + visible.filter((record) => overlapPairs(reads, [{ kind: record.kind, segments: record.path }]) > 0).length;
          examined +=
            2 * overlapPairs(reads, writes) +
            overlapPairs(
              reads,
              written.map((record) => ({ kind: record.kind, segments: record.path })),
            );
        }
        const work = (batch as CallBatch).work;
        expect(work.prepared).toBeLessThanOrEqual(prepares);
        expect(work.examined).toBeLessThanOrEqual(examined);
      }),
      settings,
    );
  });
});
