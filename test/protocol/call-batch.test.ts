/** Unit tests of src/protocol/calls/call-batch.ts: scheduling one batch of calls (CALL-6), waiting for writers (VAR-17), failing what never runs (VAR-5, PLAN-4). */
import { describe, expect, it } from 'vitest';
import { type BatchEntry, type BatchHooks, CallBatch } from '../../src/protocol/calls/call-batch.js';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import { CallError, type ProtocolError } from '../../src/protocol/errors.js';
import type { Call } from '../../src/protocol/types.js';
import { makeWrite } from '../../src/protocol/variables/data-records.js';
import { parseOutputPath } from '../../src/protocol/variables/references.js';
import { resolveValue } from '../../src/protocol/context/resolve-references.js';

/** Lets the microtasks and timers queued so far run. */
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * A batch over a real context store: `prepare` resolves references like the loop does, `execute`
 * waits for the call's gate (when the test holds one) and writes the call's `result` parameter at
 * its `_outputPath`.
 */
function harness(initial: Call[] = []) {
  const store = new ContextStore();
  for (const seed of initial) {
    const target = parseOutputPath(seed._outputPath as string)!.targets[0]!;
    store.append(makeWrite(target, seed.result, { call: 'seed' }));
  }
  const log: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const prepared = new Map<string, Call>();
  const failures = new Map<string, ProtocolError>();
  const preparedOnce = new Set<string>();
  const hooks: BatchHooks = {
    prepare(entry) {
      if (entry.call._tool === 'explode') throw new CallError('unknown_tool', `There is no tool named "explode".`, { toolName: 'explode', available: [] });
      // A tool that leaves the context after its call was first prepared: the call cannot be prepared again.
      if (entry.call._tool === 'vanishing' && preparedOnce.has(entry.id))
        throw new CallError('unknown_tool', `There is no tool named "vanishing".`, { toolName: 'vanishing', available: [] });
      preparedOnce.add(entry.id);
      const { _outputPath, ...rest } = entry.call;
      const resolution = resolveValue(rest, (reference) => store.read(reference, entry.call._instance));
      if (resolution.status === 'blocked') return resolution;
      return { status: 'ready', call: resolution.value as Call };
    },
    async execute(entry, call) {
      log.push(`start ${entry.id}`);
      prepared.set(entry.id, call);
      await gates.get(entry.id)?.promise;
      const path = typeof entry.call._outputPath === 'string' ? parseOutputPath(entry.call._outputPath) : undefined;
      for (const target of path?.targets ?? []) store.append(makeWrite(target, call.result, { call: entry.id }));
      log.push(`end ${entry.id}`);
    },
    fail(entry, error) {
      log.push(`fail ${entry.id}`);
      failures.set(entry.id, error);
    },
    watch: (listener) => store.watch(listener),
  };
  const batch = new CallBatch(hooks);
  /** Holds a call's execution until `release(id)`. */
  const hold = (id: string) => gates.set(id, deferred());
  const release = (id: string) => gates.get(id)?.resolve();
  return { batch, store, log, prepared, failures, hold, release };
}

const entry = (id: string, call: Call): BatchEntry => ({ id, call });

describe('CallBatch: running calls (CALL-6, TOOL-18)', () => {
  it('starts independent calls at once, in parallel', async () => {
    const { batch, log, hold, release } = harness();
    hold('a');
    hold('b');
    batch.addAll([entry('a', { _tool: 't', _outputPath: '†state.a', result: 1 }), entry('b', { _tool: 't', _outputPath: '†state.b', result: 2 })]);
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    release('b');
    release('a');
    batch.close();
    await batch.settled();
    expect(log.slice(2).sort()).toEqual(['end a', 'end b']);
  });

  it('gives a prepared call its references resolved with their types (VAR-2)', async () => {
    const { batch, prepared } = harness([{ _tool: 'seed', _outputPath: '†state.n', result: 3 }]);
    batch.add(entry('a', { _tool: 't', n: '†state.n', label: 'n=†state.n' }));
    batch.close();
    await batch.settled();
    expect(prepared.get('a')).toEqual({ _tool: 't', n: 3, label: 'n=3' });
  });

  it('refuses calls once it is closed', () => {
    const { batch } = harness();
    batch.close();
    expect(() => batch.add(entry('a', { _tool: 't' }))).toThrow();
  });
});

describe('CallBatch: waiting for writers (VAR-17, PLAN-3)', () => {
  it('makes a reader wait for a writer of the same set, whatever their order in the list', async () => {
    const { batch, log, prepared } = harness();
    batch.addAll([
      entry('reader', { _tool: 't', greeting: '†state.greeting' }),
      entry('writer', { _tool: 't', _outputPath: '†state.greeting', result: 'Hello' }),
    ]);
    batch.close();
    await batch.settled();
    expect(log).toEqual(['start writer', 'end writer', 'start reader', 'end reader']);
    expect(prepared.get('reader')?.greeting).toBe('Hello');
  });

  it('schedules calls added in one tick together: the reader waits even though an older value is present', async () => {
    const { batch, log, prepared, hold, release } = harness([{ _tool: 'seed', _outputPath: '†state.greeting', result: 'old' }]);
    hold('writer');
    batch.add(entry('reader', { _tool: 't', greeting: '†state.greeting.text || †state.greeting' }));
    batch.add(entry('writer', { _tool: 't', _outputPath: '†state.greeting', result: 'new' }));
    await tick();
    expect(log).toEqual(['start writer']);
    release('writer');
    batch.close();
    await batch.settled();
    expect(prepared.get('reader')?.greeting).toBe('new');
  });

  it('starts a call streamed in a later tick on arrival, without waiting for a writer that comes after it', async () => {
    const { batch, log, prepared } = harness([{ _tool: 'seed', _outputPath: '†state.greeting', result: 'old' }]);
    batch.add(entry('reader', { _tool: 't', greeting: '†state.greeting' }));
    await tick();
    expect(log).toEqual(['start reader', 'end reader']);
    batch.add(entry('writer', { _tool: 't', _outputPath: '†state.greeting', result: 'new' }));
    batch.close();
    await batch.settled();
    expect(prepared.get('reader')?.greeting).toBe('old');
  });

  it('makes a call streamed later wait for a writer that is still running', async () => {
    const { batch, log, prepared, hold, release } = harness([{ _tool: 'seed', _outputPath: '†state.greeting', result: 'old' }]);
    hold('writer');
    batch.add(entry('writer', { _tool: 't', _outputPath: '†state.greeting', result: 'new' }));
    await tick();
    batch.add(entry('reader', { _tool: 't', greeting: '†state.greeting' }));
    await tick();
    expect(log).toEqual(['start writer']);
    release('writer');
    batch.close();
    await batch.settled();
    expect(prepared.get('reader')?.greeting).toBe('new');
  });

  it('retries a blocked call whenever another call finishes, even one that did not declare the write (VAR-5)', async () => {
    const { batch, log, store, prepared } = harness();
    batch.add(entry('reader', { _tool: 't', x: '†state.late' }));
    await tick();
    expect(log).toEqual([]);
    // A call of the batch whose Activity appended the data as a message.
    batch.add(entry('other', { _tool: 't' }));
    store.append({ type: 'state', state: { late: 42 } });
    batch.close();
    await batch.settled();
    expect(prepared.get('reader')?.x).toBe(42);
  });

  it('keeps instances apart: a reader on one instance does not wait for a writer on another', async () => {
    const { batch, log, hold, release } = harness([{ _tool: 'seed', _outputPath: '†state.x', result: 1 }]);
    hold('writer');
    batch.addAll([
      entry('writer', { _tool: 't', _outputPath: '†state.x', result: 2, _instance: 'fr' }),
      entry('reader', { _tool: 't', x: '†state.x', _instance: 'de' }),
    ]);
    await tick();
    expect(log).toEqual(['start writer', 'start reader', 'end reader']);
    release('writer');
    batch.close();
    await batch.settled();
  });
});

describe('CallBatch: calls that never run (VAR-5, PLAN-4, CALL-3)', () => {
  it('fails a call whose references never resolve only when the batch is closed, naming each missing reference', async () => {
    const { batch, failures, log } = harness([{ _tool: 'seed', _outputPath: '†state.present', result: 1 }]);
    batch.add(entry('a', { _tool: 't', x: '†state.missing', y: '†state.present', z: 'and †input.none' }));
    await tick();
    expect(failures.size).toBe(0);
    batch.close();
    await batch.settled();
    const error = failures.get('a');
    expect(error).toBeInstanceOf(CallError);
    expect(error?.code).toBe('unresolved_reference');
    expect(error?.message).toContain('†state.missing');
    expect(error?.message).toContain('†input.none');
    expect(error?.message).not.toContain('†state.present');
    expect(error?.data.missing).toEqual(['†state.missing', '†input.none']);
    expect(log).toEqual(['fail a']);
  });

  it('names only the missing sides of an && expression (VAR-7)', async () => {
    const { batch, failures } = harness([{ _tool: 'seed', _outputPath: '†state.a', result: 1 }]);
    batch.add(entry('a', { _tool: 't', x: '†state.a && †state.b' }));
    batch.close();
    await batch.settled();
    expect(failures.get('a')?.data.missing).toEqual(['†state.b']);
  });

  it('fails every member of a cycle with unresolved_reference, naming the cycle, and runs the rest', async () => {
    const { batch, failures, log } = harness();
    batch.addAll([
      entry('free', { _tool: 'free', _outputPath: '†state.free', result: 1 }),
      entry('a', { _tool: 'a', x: '†state.b', _outputPath: '†state.a' }),
      entry('b', { _tool: 'b', x: '†state.a', _outputPath: '†state.b', _id: 'b' }),
    ]);
    batch.close();
    await batch.settled();
    expect(log).toContain('end free');
    expect([...failures.keys()].sort()).toEqual(['a', 'b']);
    for (const error of failures.values()) {
      expect(error.code).toBe('unresolved_reference');
      expect(error.message).toMatch(/cycle/);
      expect(error.message).toContain('(a) waits for b (b)');
      expect([...(error.data.cycle as string[])].sort()).toEqual(['a', 'b']);
    }
  });

  it('gives the dependants of a failed call their turn: they run with what exists', async () => {
    const { batch, failures, prepared } = harness([{ _tool: 'seed', _outputPath: '†state.a', result: 'old a' }]);
    batch.addAll([entry('writer', { _tool: 't', x: '†input.missing', _outputPath: '†state.a' }), entry('reader', { _tool: 't', a: '†state.a' })]);
    batch.close();
    await batch.settled();
    expect([...failures.keys()]).toEqual(['writer']);
    expect(prepared.get('reader')?.a).toBe('old a');
  });

  it('fails a chain of dependants one after the other, each naming what it misses', async () => {
    const { batch, failures, log } = harness();
    batch.addAll([
      entry('c', { _tool: 't', x: '†state.b' }),
      entry('b', { _tool: 't', x: '†state.a', _outputPath: '†state.b' }),
      entry('a', { _tool: 't', x: '†input.missing', _outputPath: '†state.a' }),
    ]);
    batch.close();
    await batch.settled();
    expect(log).toEqual(['fail a', 'fail b', 'fail c']);
    expect(failures.get('a')?.data.missing).toEqual(['†input.missing']);
    expect(failures.get('b')?.data.missing).toEqual(['†state.a']);
    expect(failures.get('c')?.data.missing).toEqual(['†state.b']);
  });

  it('fails a call whose prepare throws with that error, and runs the others', async () => {
    const { batch, failures, log } = harness();
    batch.addAll([entry('bad', { _tool: 'explode' }), entry('good', { _tool: 't' })]);
    batch.close();
    await batch.settled();
    expect(failures.get('bad')?.code).toBe('unknown_tool');
    expect(log).toEqual(['fail bad', 'start good', 'end good']);
  });

  it('fails a blocked call whose prepare throws when the batch is closed with that error, not as unresolved', async () => {
    const { batch, failures, log } = harness();
    batch.add(entry('gone', { _tool: 'vanishing', x: '†state.missing' }));
    await tick();
    expect(failures.size).toBe(0);
    batch.close();
    await batch.settled();
    const error = failures.get('gone');
    expect(error?.code).toBe('unknown_tool');
    expect(error?.message).toBe('There is no tool named "vanishing".');
    expect(error?.data.toolName).toBe('vanishing');
    expect(log).toEqual(['fail gone']);
  });

  it('fails a call whose prepare throws even before the batch is closed', async () => {
    const { batch, failures } = harness();
    batch.add(entry('bad', { _tool: 'explode' }));
    await tick();
    expect(failures.get('bad')?.code).toBe('unknown_tool');
    batch.close();
    await batch.settled();
  });
});

describe('CallBatch: settling (LOOP-4)', () => {
  it('settles only after it is closed, even when every call has finished', async () => {
    const { batch } = harness();
    let settled = false;
    void batch.settled().then(() => {
      settled = true;
    });
    batch.add(entry('a', { _tool: 't' }));
    await tick();
    await tick();
    expect(settled).toBe(false);
    batch.close();
    await tick();
    expect(settled).toBe(true);
  });

  it('settles after the calls still running have finished', async () => {
    const { batch, hold, release, log } = harness();
    hold('slow');
    batch.add(entry('slow', { _tool: 't' }));
    batch.close();
    let settled = false;
    void batch.settled().then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    release('slow');
    await batch.settled();
    expect(log).toEqual(['start slow', 'end slow']);
  });

  it('settles an empty batch once closed', async () => {
    const { batch } = harness();
    batch.close();
    await expect(batch.settled()).resolves.toBeUndefined();
  });
});

describe('CallBatch: work linear in the calls and their dependencies (PLAN-9)', () => {
  it('prepares each call of a 2,000-call chain once and examines a few candidates per call', async () => {
    const { batch, failures, prepared } = harness();
    const size = 2000;
    batch.addAll(
      Array.from({ length: size }, (_, index) =>
        entry(`c${index}`, { _tool: 't', ...(index > 0 ? { x: `†state.v${index - 1}` } : {}), _outputPath: `†state.v${index}`, result: index }),
      ),
    );
    batch.close();
    await batch.settled();
    expect(failures.size).toBe(0);
    expect(prepared.get(`c${size - 1}`)?.x).toBe(size - 2);
    expect(batch.work.prepared).toBe(size);
    // Each call finds its one writer, and is found by its one reader.
    expect(batch.work.examined).toBeLessThanOrEqual(2 * size);
  });

  it('prepares a blocked call again only after a write to what it misses, not whenever any call finishes', async () => {
    const { batch, store, failures, prepared } = harness();
    const size = 300;
    batch.addAll(Array.from({ length: size }, (_, index) => entry(`r${index}`, { _tool: 't', x: `†state.m${index}` })));
    await tick();
    expect(batch.work.prepared).toBe(size);
    for (let index = 0; index < size; index++) {
      // A write no call declared (an Activity appending data), then an unrelated call finishing.
      store.append(makeWrite(parseOutputPath(`†state.m${index}`)!.targets[0]!, index, { call: 'activity' }));
      batch.add(entry(`other${index}`, { _tool: 't' }));
      await tick();
    }
    batch.close();
    await batch.settled();
    expect(failures.size).toBe(0);
    expect(prepared.get('r7')?.x).toBe(7);
    expect(batch.work.prepared).toBe(3 * size);
  });

  it('fails a thousand cycles one after the other, each naming its own calls, without searching the whole batch again', async () => {
    const { batch, failures } = harness();
    const pairs = 1000;
    const entries: BatchEntry[] = [];
    // A chain of dependants on top, so that every search would start by walking it again.
    for (let index = 0; index < pairs; index++)
      entries.push(entry(`d${index}`, { _tool: 't', x: index + 1 < pairs ? `†state.d${index + 1}` : '†state.a0', _outputPath: `†state.d${index}` }));
    for (let index = 0; index < pairs; index++) {
      entries.push(
        entry(`a${index}`, { _tool: 't', x: `†state.b${index}`, y: index + 1 < pairs ? `†state.a${index + 1}` : 'end', _outputPath: `†state.a${index}` }),
      );
      entries.push(entry(`b${index}`, { _tool: 't', x: `†state.a${index}`, _outputPath: `†state.b${index}` }));
    }
    batch.addAll(entries);
    batch.close();
    await batch.settled();
    expect(failures.size).toBe(3 * pairs);
    expect(failures.get('a500')?.data.cycle).toEqual(['a500', 'b500']);
    expect(failures.get('d0')?.data.missing).toEqual(['†state.d1']);
    expect(batch.work.examined).toBeLessThanOrEqual(10 * entries.length);
  });
});
