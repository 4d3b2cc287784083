/** Tests of src/protocol/run/tree-bounds.ts: the run bound of a run tree (DEL-19) and its bound on model calls in flight (LOOP-16). */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { ReplayModel } from '../../src/models/replay.js';
import { DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_RUNS } from '../../src/protocol/constants.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { Slots, TreeBounds, treeLimits } from '../../src/protocol/run/tree-bounds.js';
import { TreeModel, TreeRuntime, fan, turns } from '../helpers/fan-out-tree.js';

/** Settles `promise` and says how: `granted`, the error's code, or `pending` after a few turns. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  let state = 'pending';
  promise.then(
    () => (state = 'granted'),
    (error: unknown) => (state = error instanceof ProtocolError ? error.code : String(error)),
  );
  await turns(2);
  return state;
}

describe('Slots', () => {
  it('hands out slots up to its size, then queues the rest', async () => {
    const slots = new Slots(2);
    await slots.acquire();
    await slots.acquire();
    const third = slots.acquire();
    expect(await outcome(third)).toBe('pending');
    expect(slots).toMatchObject({ inUse: 2, queued: 1 });
  });

  it('passes a released slot to the longest waiter, so a newcomer never overtakes it', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    const order: string[] = [];
    const noted = (name: string) => (next: () => void) => {
      order.push(name);
      return next;
    };
    const first = slots.acquire().then(noted('first'));
    const second = slots.acquire().then(noted('second'));
    release();
    // Taken before the first waiter's turn came: it must queue behind both.
    const newcomer = slots.acquire().then(noted('newcomer'));
    (await first)();
    (await second)();
    (await newcomer)();
    expect(order).toEqual(['first', 'second', 'newcomer']);
    expect(slots).toMatchObject({ inUse: 0, queued: 0 });
  });

  it('gives a slot back once, however often its release is called', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    release();
    release();
    expect(slots.inUse).toBe(0);
    await slots.acquire();
    expect(await outcome(slots.acquire())).toBe('pending');
  });

  it('rejects a wait with cancelled_by_user when its signal aborts, and the waiter leaves the queue', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    const controller = new AbortController();
    const cancelledWait = slots.acquire(controller.signal);
    const later = slots.acquire();
    controller.abort();
    expect(await outcome(cancelledWait)).toBe('cancelled_by_user');
    expect(slots.queued).toBe(1);
    release();
    // The slot went to the waiter behind the cancelled one.
    expect(await outcome(later)).toBe('granted');
    expect(slots).toMatchObject({ inUse: 1, queued: 0 });
  });

  it('rejects at once when the signal has already aborted, even with slots free', async () => {
    const slots = new Slots(1);
    const controller = new AbortController();
    controller.abort();
    expect(await outcome(slots.acquire(controller.signal))).toBe('cancelled_by_user');
    expect(slots.inUse).toBe(0);
  });
});

describe('TreeBounds', () => {
  it('counts the top run, admits runs up to maxRuns and refuses the next with budget_exceeded', () => {
    const bounds = new TreeBounds({ maxRuns: 3, maxConcurrency: 1 });
    expect(bounds.runs).toBe(1);
    bounds.admitRun('a');
    bounds.admitRun('b');
    expect(() => bounds.check()).not.toThrow();
    expect(() => bounds.admitRun('Delegating "split"')).toThrow(/Delegating "split" would start run 4 of the run tree, past its limit of 3 runs/);
    expect(bounds).toMatchObject({ runs: 3, refused: 1 });
  });

  it('stops the whole tree once a run was refused, as a spent budget does', () => {
    const bounds = new TreeBounds({ maxRuns: 1, maxConcurrency: 1 });
    expect(() => bounds.check()).not.toThrow();
    expect(() => bounds.admitRun('x')).toThrow(ProtocolError);
    let error: unknown;
    try {
      bounds.check();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: 'budget_exceeded', data: { maxRuns: 1 } });
    expect((error as Error).message).toContain('limit of 1 run ');
  });
});

describe('treeLimits', () => {
  it('defaults to 128 model calls in flight and 2000 runs', () => {
    expect(treeLimits({})).toEqual({ maxConcurrency: 128, maxRuns: 2000 });
    expect([DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_RUNS]).toEqual([128, 2000]);
    expect(treeLimits({ maxRuns: 5, maxConcurrency: 500 })).toEqual({ maxConcurrency: 500, maxRuns: 5 });
  });

  it('refuses limits that are not whole numbers of at least 1 with usage_error, naming the option', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => treeLimits({ maxConcurrency: bad })).toThrow(
        expect.objectContaining({ code: 'usage_error', message: expect.stringContaining('maxConcurrency') }),
      );
      expect(() => treeLimits({ maxRuns: bad })).toThrow(expect.objectContaining({ code: 'usage_error', message: expect.stringContaining('maxRuns') }));
    }
  });
});

const fanOut = resolve('test/fixtures/fan-out');

describe('the run bound of a run tree (DEL-19)', () => {
  it('stops a self-delegating fan-out of 10 at maxRuns with budget_exceeded, having started exactly that many runs', async () => {
    const runtime = createRuntime({ root: fanOut });
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(resolve(fanOut, 'fan.json')), {
      model: await ReplayModel.fromFile(resolve(fanOut, 'fan.cassette.json')),
      tracer: new Tracer([sink]),
      maxRuns: 25,
    });
    expect(!result.ok && result.error.code).toBe('budget_exceeded');
    expect(!result.ok && result.error.message).toContain('limit of 25 runs');
    const named = (event: string) => sink.events.filter((each) => each.event === event);
    expect(named('run.started')).toHaveLength(25);
    expect(named('delegate.started')).toHaveLength(24);
    // A refused delegation fails its call (the parent sees budget_exceeded) and starts nothing.
    const refused = named('call.failed').filter((event) => (event.error as { code: string }).code === 'budget_exceeded');
    expect(refused.length).toBeGreaterThan(0);
    // Like a spent budget, the bound stops every run of the tree at its next model call.
    expect(named('run.completed')).toEqual([]);
    expect(named('run.failed').map((event) => event.code)).toEqual(Array.from({ length: 25 }, () => 'budget_exceeded'));
  });

  it('gives a tree 2000 runs and 128 model calls in flight unless told otherwise', async () => {
    const runtime = new TreeRuntime(fan(1));
    await runtime.runTree({ model: new TreeModel(fan(1)) });
    expect(runtime.treeBounds?.limits).toEqual({ maxRuns: 2000, maxConcurrency: 128 });
    expect(runtime.treeBounds?.runs).toBe(2);
  });

  it('fails the top run with usage_error when its limits are not whole numbers of at least 1', async () => {
    const runtime = new TreeRuntime(fan(1));
    const model = new TreeModel(fan(1));
    const result = await runtime.runTree({ model, maxConcurrency: 0 });
    expect(!result.ok && result.error.code).toBe('usage_error');
    expect(model.requests).toEqual([]);
  });
});

describe('the bound on model calls in flight (LOOP-16)', () => {
  it('completes a tree whose parents wait for their children with a single slot, one model call at a time', async () => {
    // 0 → 1, 2; 1 → 3; 3 → 4: every parent waits for children that need the one slot.
    const shape = [[1, 2], [3], [], [4], []];
    const model = new TreeModel(shape, () => turns(2));
    const runtime = new TreeRuntime(shape);
    const sink = memorySink();
    const result = await runtime.runTree({ model, maxConcurrency: 1, tracer: new Tracer([sink]) });
    expect(result.ok).toBe(true);
    expect(model.maxInFlight).toBe(1);
    expect(sink.events.filter((event) => event.event === 'run.completed')).toHaveLength(5);
  });

  it('never throttles a 100-wide fan-out at the default: all 100 children are asked at once', async () => {
    const shape = fan(100);
    const runtime = new TreeRuntime(shape);
    let throttled = false;
    let allIn = false;
    // Each child holds its answer until all 100 children are being answered together, or until
    // one of them is found waiting for a slot.
    const model: TreeModel = new TreeModel(shape, async (request: ModelRequest) => {
      if (request.requestName === 'n0') return;
      while (!allIn && !throttled) {
        allIn = model.inFlight === 100;
        throttled = (runtime.treeBounds?.slots.queued ?? 0) > 0;
        await turns(1);
      }
    });
    const result = await runtime.runTree({ model });
    expect(throttled).toBe(false);
    expect(model.maxInFlight).toBe(100);
    expect(result.ok).toBe(true);
  });

  it('cancels a run waiting for a slot: it is never sent to the model and every run ends cancelled', async () => {
    const shape = fan(2);
    const runtime = new TreeRuntime(shape);
    const controller = new AbortController();
    // The first child holds the only slot until the run is cancelled.
    const model = new TreeModel(shape, (request) =>
      request.requestName === 'n0'
        ? Promise.resolve()
        : new Promise((_, reject) => request.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    );
    const sink = memorySink();
    const running = runtime.runTree({ model, maxConcurrency: 1, signal: controller.signal, tracer: new Tracer([sink]) });
    // Unbounded, the second child would reach the model (a third request) instead of queueing.
    while ((runtime.treeBounds?.slots.queued ?? 0) === 0 && model.requests.length < 3) await turns(1);
    expect(runtime.treeBounds?.slots.queued).toBe(1);
    controller.abort();
    const result = await running;
    expect(!result.ok && result.error.code).toBe('cancelled_by_user');
    expect(model.requests.map((request) => request.requestName)).toEqual(['n0', 'n1']);
    expect(sink.events.filter((event) => event.event === 'run.failed').map((event) => event.code)).toEqual([
      'cancelled_by_user',
      'cancelled_by_user',
      'cancelled_by_user',
    ]);
    expect(runtime.treeBounds?.slots).toMatchObject({ inUse: 0, queued: 0 });
  });
});
