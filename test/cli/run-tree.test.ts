/** Tests of the RunTree state model (src/cli/run-tree.ts) fed with a recorded trace. */
import { describe, expect, it } from 'vitest';
import { RunTree, elapsedMs, subtreeUsage } from '../../src/cli/progress/run-tree.js';
import type { TraceEvent } from '../../src/protocol/trace/trace.js';
import { musicEnd, musicEvents, musicStart } from './music-events.js';

function treeOf(events: TraceEvent[]): RunTree {
  const tree = new RunTree();
  for (const event of events) tree.apply(event);
  return tree;
}

/** The events up to and including the first one matching `predicate`. */
function eventsUntil(predicate: (event: TraceEvent) => boolean): TraceEvent[] {
  const index = musicEvents.findIndex(predicate);
  return musicEvents.slice(0, index + 1);
}

describe('RunTree', () => {
  it("nests the composer's sound-designer under the composer and the direct sound-designer under the producer", () => {
    const tree = treeOf(musicEvents);
    expect(tree.roots.map((node) => node.name)).toEqual(['producer']);
    const producer = tree.roots[0]!;
    expect(tree.childrenOf(producer).map((node) => [node.run, node.name])).toEqual([
      ['run_composer', 'composer'],
      ['run_sound_direct', 'sound-designer'],
    ]);
    const composer = tree.get('run_composer')!;
    expect(tree.childrenOf(composer).map((node) => node.run)).toEqual(['run_sound_nested']);
    expect(tree.nodes().map((node) => node.run)).toEqual(['run_producer', 'run_composer', 'run_sound_nested', 'run_sound_direct']);
    expect(tree.get('run_sound_nested')).toMatchObject({
      parent: 'run_composer',
      depth: 2,
      call: '0.1',
      model: 'replay:requests/music/producer.cassette.json',
    });
  });

  it("counts each run's own tokens, cost and steps, and marks every run done at the end", () => {
    const tree = treeOf(musicEvents);
    expect(tree.get('run_producer')).toMatchObject({ status: 'done', step: 2, tokens: { inputTokens: 1820, outputTokens: 208 }, costUsd: 0.0056 });
    expect(tree.get('run_composer')).toMatchObject({ status: 'done', step: 2, tokens: { inputTokens: 1280, outputTokens: 170 }, costUsd: 0.0035 });
    expect(tree.get('run_composer')?.usageTotal).toMatchObject({ inputTokens: 1490, outputTokens: 240, costUsd: 0.0042, steps: 3 });
    expect(tree.running).toBe(false);
    expect(elapsedMs(tree.get('run_producer')!, Number.POSITIVE_INFINITY)).toBe(musicEnd - musicStart);
  });

  it('shows a run in progress with its step, live tokens and running calls', () => {
    const tree = treeOf(eventsUntil((event) => event.event === 'call.completed' && event.run === 'run_composer'));
    expect(tree.running).toBe(true);
    expect(tree.get('run_composer')).toMatchObject({ status: 'running', step: 1, calls: { running: 1, done: 1, failed: 0 } });
    expect(tree.get('run_producer')).toMatchObject({ step: 1, tokens: { inputTokens: 640, outputTokens: 88 }, calls: { running: 2, done: 0, failed: 0 } });
    expect(tree.get('run_composer')?.endedAt).toBeUndefined();
  });

  it('counts a failed call as failed whether or not it had started', () => {
    const common = { run: 'run_a', parent: null, depth: 0 };
    const tree = treeOf([
      { ts: '2026-01-01T00:00:00.000Z', event: 'run.started', ...common, name: 'a', model: 'm' },
      { ts: '2026-01-01T00:00:00.100Z', event: 'call.started', ...common, call: '0.0', tool: 't' },
      { ts: '2026-01-01T00:00:00.200Z', event: 'call.failed', ...common, call: '0.0', tool: 't', error: { code: 'activity_error', message: 'no' } },
      { ts: '2026-01-01T00:00:00.300Z', event: 'call.failed', ...common, call: '0.1', tool: 'u', error: { code: 'unknown_tool', message: 'no' } },
    ]);
    expect(tree.get('run_a')?.calls).toEqual({ running: 0, done: 0, failed: 2 });
  });

  it("attaches a child under its parent when the child's run.started comes before the delegate.started", () => {
    const delegateStarted = musicEvents.find((event) => event.event === 'delegate.started' && event.child === 'run_composer')!;
    const runStarted = musicEvents.find((event) => event.event === 'run.started' && event.run === 'run_composer')!;
    const tree = treeOf([musicEvents[0]!, runStarted, delegateStarted]);
    expect(tree.roots.map((node) => node.run)).toEqual(['run_producer']);
    expect(tree.childrenOf(tree.roots[0]!).map((node) => node.name)).toEqual(['composer']);
  });

  it('marks a cancelled run cancelled, a failed run failed, and an unpriced answer makes the cost unknown', () => {
    const common = (run: string) => ({ run, parent: null, depth: 0 });
    const tree = treeOf([
      { ts: '2026-01-01T00:00:00.000Z', event: 'run.started', ...common('run_a'), name: 'a', model: 'm' },
      { ts: '2026-01-01T00:00:00.000Z', event: 'run.started', ...common('run_b'), name: 'b', model: 'm' },
      { ts: '2026-01-01T00:00:00.100Z', event: 'model.response', ...common('run_a'), step: 0, usage: { inputTokens: 5, outputTokens: 1 }, costUsd: null },
      { ts: '2026-01-01T00:00:00.200Z', event: 'run.failed', ...common('run_a'), code: 'cancelled_by_user', message: 'The run was cancelled.' },
      { ts: '2026-01-01T00:00:00.300Z', event: 'run.failed', ...common('run_b'), code: 'max_steps_exceeded', message: 'Too many steps.' },
    ]);
    expect(tree.get('run_a')).toMatchObject({ status: 'cancelled', costUsd: null, error: { code: 'cancelled_by_user' } });
    expect(tree.get('run_b')).toMatchObject({ status: 'failed', error: { code: 'max_steps_exceeded', message: 'Too many steps.' } });
  });

  it("sums a run's subtree when no usage was reported, and cancelRunning ends what is left running", () => {
    const tree = treeOf(eventsUntil((event) => event.event === 'model.response' && event.run === 'run_sound_direct'));
    const producer = tree.get('run_producer')!;
    expect(subtreeUsage(tree, producer, musicEnd)).toMatchObject({ inputTokens: 640 + 520 + 205, outputTokens: 88 + 110 + 66, steps: 1 + 1 + 1 });
    tree.cancelRunning(musicEnd);
    expect(tree.nodes().map((node) => node.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
  });

  it('ignores events that do not change the tree', () => {
    const tree = new RunTree();
    expect(tree.apply({ ts: '2026-01-01T00:00:00.000Z', event: 'approval.requested', run: 'r', parent: null, depth: 0 })).toBe(false);
    expect(tree.nodes()).toEqual([]);
  });
});
