/** Child runs (src/protocol/calls/child-run.ts): their depth, ids, inherited options, usage roll-up, and what a remote runner is handed. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { childRunId } from '../../src/protocol/calls/child-run.js';
import type { Activity, RemoteChild, RunOptions, RunResult } from '../../src/protocol/contracts.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';

/** The parent: one tool, `spawn`, whose Activity starts children; its answer is a string. */
const PARENT = {
  meta: { name: 'parent' },
  context: [
    { type: 'system', text: 'You delegate.' },
    { type: 'tool', tool: { spawn: { description: 'Starts children.', properties: { count: { type: 'integer' } }, required: ['count'] } } },
  ],
  schema: { type: 'string' },
};

/** A child that answers in `steps` steps: a latent `mark` call at each step before the last. */
const childDocument = (steps: number, maxSteps?: number) => ({
  meta: { name: 'child' },
  ...(maxSteps === undefined ? {} : { config: { maxSteps } }),
  context: [
    { type: 'system', text: `Answer after ${steps} steps.` },
    { type: 'tool', tool: { mark: { description: 'Marks a step.', properties: { _output: { type: 'string' } } } } },
  ],
  schema: { type: 'string' },
});

/**
 * The parent calls `spawn` with `count` at step 0 and answers 'done' at step 1; every child step
 * before its last makes a `mark` call, and its last answers 'child done'. Each answer costs 10
 * input and 1 output tokens.
 */
function treeModel(count: number, childSteps: number): ReplayModel {
  const usage = { inputTokens: 10, outputTokens: 1 };
  return new ReplayModel([
    { match: { request: 'parent', step: 0 }, solution: { calls: [{ _tool: 'spawn', count, _outputPath: '†state.children' }], output: null }, usage },
    { match: { request: 'parent', step: 1 }, solution: { calls: [], output: 'done' }, usage },
    ...Array.from({ length: childSteps - 1 }, (_, step) => ({
      match: { request: 'child', step },
      solution: { calls: [{ _tool: 'mark', _output: `step ${step}` }], output: null },
      usage,
      repeat: true,
    })),
    { match: { request: 'child', step: childSteps - 1 }, solution: { calls: [], output: 'child done' }, usage, repeat: true },
  ]);
}

/** A runtime whose `spawn` Activity starts `count` children of `child`, one after the other, and returns their results. */
function spawning(child: object, results: RunResult[] = []): Runtime {
  const runtime = new Runtime();
  const spawn: Activity = async (call, _tool, _context, environment) => {
    for (let n = 0; n < Number(call.count); n++) {
      results.push(await environment.runChild({ request: runtime.validate(child, 'child.json'), trusted: true, description: `Spawning child ${n}` }));
    }
    return results.map((result) => (result.ok ? result.output : result.error.code));
  };
  return runtime.registerActivity('spawn', spawn);
}

async function runTree(runtime: Runtime, model: ReplayModel, options: RunOptions = {}) {
  const sink = memorySink();
  const result = await runtime.run(runtime.validate(PARENT, 'parent.json'), { model, tracer: new Tracer([sink]), ...options });
  return { result, events: sink.events };
}

describe('child runs', () => {
  it('starts each child one level deeper, with an id derived from its place, and rolls its usage up (JOURNAL-6, DEL-17)', async () => {
    const results: RunResult[] = [];
    const { result, events } = await runTree(spawning(childDocument(1), results), treeModel(2, 1));
    expect(result.ok && result.output).toBe('done');
    const started = events.filter((event) => event.event === 'run.started' && event.depth === 1);
    const spawnCall = events.find((event) => event.event === 'call.started' && event.tool === 'spawn')?.call as string;
    const place = { callId: spawnCall, instance: undefined };
    expect(started.map((event) => event.run)).toEqual([childRunId(result.run, place, 0), childRunId(result.run, place, 1)]);
    expect(started.every((event) => event.parent === result.run)).toBe(true);
    expect(results.map((child) => child.run)).toEqual(started.map((event) => event.run));
    // Two parent answers and one answer of each child: the children's tokens count in the parent's total.
    expect(result.usage.inputTokens).toBe(20);
    expect(result.usageTotal.inputTokens).toBe(40);
  });

  it('derives the same id for the same place and ordinal, and another for another instance or ordinal (JOURNAL-6)', () => {
    const place = { callId: 'c1', instance: undefined };
    const id = childRunId('run_000000000001', place, 0);
    expect(id).toMatch(/^run_[0-9a-f]{12}$/);
    expect(childRunId('run_000000000001', place, 0)).toBe(id);
    expect(
      new Set([
        id,
        childRunId('run_000000000001', place, 1),
        childRunId('run_000000000001', { callId: 'c1', instance: 'fr' }, 0),
        childRunId('run_000000000002', place, 0),
      ]).size,
    ).toBe(4);
  });

  it('refuses a child deeper than maxDepth before it starts: the call fails with max_depth_exceeded (DEL-14)', async () => {
    const model = treeModel(1, 1);
    const { result, events } = await runTree(spawning(childDocument(1)), model, { maxDepth: 0 });
    expect(result.ok && result.output).toBe('done');
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({
      tool: 'spawn',
      error: { code: 'max_depth_exceeded', message: 'Spawning child 0 would start a run at depth 1, deeper than the maximum of 0.' },
    });
    expect(events.some((event) => event.event === 'run.started' && event.depth === 1)).toBe(false);
    expect(model.requests.map((request) => request.requestName)).toEqual(['parent', 'parent']);
  });

  it('passes the caller’s maxSteps on only to a child whose document sets none (DEL-20)', async () => {
    // The parent needs 2 steps, the child 2: a caller's maxSteps of 2 lets both finish.
    const inherits = await runTree(spawning(childDocument(3)), treeModel(1, 3), { maxSteps: 2 });
    expect(inherits.result.ok && inherits.result.output).toBe('done');
    expect(inherits.events.find((event) => event.event === 'call.completed' && event.tool === 'spawn')?.result).toEqual(['max_steps_exceeded']);

    const ownLimit = await runTree(spawning(childDocument(3, 5)), treeModel(1, 3), { maxSteps: 2 });
    expect(ownLimit.events.find((event) => event.event === 'call.completed' && event.tool === 'spawn')?.result).toEqual(['child done']);
  });

  it('hands a remote runner the child as JSON, with its place, inherited options and the tree’s limits (QUEUE-2)', async () => {
    const sent: RemoteChild[] = [];
    const runtime = spawning(childDocument(1));
    runtime.useChildRunner({
      async run(child) {
        sent.push(child);
        const usage = { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, steps: 1, toolCalls: 0, ms: 1 };
        return { ok: true, run: child.id, output: 'remote done', usage, usageTotal: usage };
      },
    });
    const model = treeModel(1, 1);
    const { result, events } = await runTree(runtime, model, { maxDepth: 4, maxRuns: 9 });
    expect(result.ok && result.output).toBe('done');
    expect(model.requests.map((request) => request.requestName)).toEqual(['parent', 'parent']);
    const spawnCall = events.find((event) => event.event === 'call.started' && event.tool === 'spawn')?.call as string;
    expect(sent).toHaveLength(1);
    const [child] = sent as [RemoteChild];
    expect(child.id).toBe(childRunId(result.run, { callId: spawnCall, instance: undefined }, 0));
    // `lineage`: the callers' run ids, the top run first, which a session approval's scope is judged by (CALL-11).
    expect(child.parent).toEqual({ run: result.run, depth: 0, callId: spawnCall, root: result.run, lineage: [result.run] });
    expect(child.request.name).toBe('child');
    expect(child.model).toBe(model.id);
    expect(child.trusted).toBe(true);
    expect(child.options).toEqual({ maxDepth: 4 });
    expect(child.limits.maxRuns).toBe(9);
    expect(events.find((event) => event.event === 'call.completed' && event.tool === 'spawn')?.result).toEqual(['remote done']);
    expect(result.usageTotal.inputTokens).toBe(result.usage.inputTokens + 7);
  });
});
