/** Tests of the end-of-run summary (src/cli/summary.ts). */
import { describe, expect, it } from 'vitest';
import { RunTree } from '../../src/cli/run-tree.js';
import { formatCount, formatSummary, previewOutput, summarize, type RunOutcome } from '../../src/cli/summary.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import type { TraceEvent } from '../../src/protocol/trace.js';
import { hasAnsi } from './fake-terminal.js';
import { musicEnd, musicEvents } from './music-events.js';

function treeOf(events: TraceEvent[]): RunTree {
  const tree = new RunTree();
  for (const event of events) tree.apply(event);
  return tree;
}

const finalEvent = musicEvents[musicEvents.length - 1]!;
const usageTotal = finalEvent.usageTotal as UsageSummary;
const succeeded: RunOutcome = { ok: true, output: finalEvent.output, usageTotal };

/** The music trace with the direct sound-designer failing instead of completing. */
function withFailingSoundDesigner(): TraceEvent[] {
  return musicEvents.flatMap((event): TraceEvent[] => {
    if (event.event === 'run.completed' && event.run === 'run_sound_direct') {
      return [
        {
          ts: event.ts,
          event: 'run.failed',
          run: event.run,
          parent: event.parent,
          depth: event.depth,
          code: 'activity_error',
          message: 'The synth is broken.',
        },
      ];
    }
    if (event.event === 'delegate.completed' && event.child === 'run_sound_direct') {
      return [
        {
          ts: event.ts,
          event: 'delegate.failed',
          run: event.run,
          parent: event.parent,
          depth: event.depth,
          call: event.call,
          child: event.child,
          code: 'activity_error',
          message: 'The synth is broken.',
        },
      ];
    }
    return [event];
  });
}

describe('summary', () => {
  it('gives the outcome, total tokens and cost, and one line per delegate with its name, model, steps, tokens, cost and time', () => {
    const lines = formatSummary(summarize(treeOf(musicEvents), succeeded));
    expect(lines[0]).toBe('✓ producer done in 1.9s · output: {"title":"Rain on Empty Streets"}');
    expect(lines[1]).toBe('  tokens 3,515 in · 514 out · cache 0 read · 0 written');
    expect(lines[2]).toBe('  cost $0.0104 · 4 runs · 6 steps · 4 tool calls');
    expect(lines[3]).toBe('  delegates');
    expect(lines.slice(4)).toEqual([
      '    composer          replay:producer.cassette.json  3 steps  1,490 in  240 out  $0.0042  480ms',
      '      sound-designer  replay:producer.cassette.json  1 step     210 in   70 out  $0.0007    0ms',
      '    sound-designer    replay:producer.cassette.json  1 step     205 in   66 out  $0.0006   40ms',
    ]);
    expect(hasAnsi(lines.join('\n'))).toBe(false);
  });

  it("takes each delegate's numbers from its delegate.completed report, including its own delegates", () => {
    const summary = summarize(treeOf(musicEvents), succeeded);
    expect(summary.delegates.map((line) => [line.name, line.depth, line.tokens.inputTokens, line.costUsd, line.steps])).toEqual([
      ['composer', 1, 1490, 0.0042, 3],
      ['sound-designer', 2, 210, 0.0007, 1],
      ['sound-designer', 1, 205, 0.0006, 1],
    ]);
    expect(summary).toMatchObject({ ok: true, tokens: { inputTokens: 3515, outputTokens: 514 }, costUsd: 0.0104, runs: 4, steps: 6, toolCalls: 4 });
  });

  it('marks a failed delegate with its code and reports what the tree saw of it', () => {
    const failure: RunOutcome = { ok: false, error: { code: 'worker_error', message: 'The delegate "sound-designer" failed.' }, usageTotal };
    const lines = formatSummary(summarize(treeOf(withFailingSoundDesigner()), failure, musicEnd));
    expect(lines[0]).toBe('✗ producer failed after 1.9s: worker_error');
    expect(lines[lines.length - 1]).toBe('    ✗ sound-designer  replay:producer.cassette.json  1 step     205 in   66 out  $0.0006   40ms  activity_error');
  });

  it('says $? and why when some model has no known price, and shows a cancelled run as cancelled', () => {
    const cancelled: RunOutcome = {
      ok: false,
      error: { code: 'cancelled_by_user', message: 'The run was cancelled.' },
      usageTotal: { ...usageTotal, costUsd: null },
    };
    const lines = formatSummary(summarize(new RunTree(), cancelled));
    expect(lines[0]).toBe('⊘ cancelled after 1.9s: cancelled_by_user');
    expect(lines[2]).toBe('  cost $? (some model has no known price) · 1 run · 6 steps · 4 tool calls');
    expect(lines).toHaveLength(3);
  });

  it('colours only when asked', () => {
    const lines = formatSummary(summarize(treeOf(musicEvents), succeeded), { color: true });
    expect(lines[0]).toMatch(/^\u001b\[32m✓\u001b\[39m \u001b\[1mproducer done in 1\.9s\u001b\[22m/);
  });

  it('previews an output in one short line and groups thousands', () => {
    expect(previewOutput('first line\nsecond line')).toBe('first line');
    expect(previewOutput({ text: 'x'.repeat(100) })).toHaveLength(60);
    expect(previewOutput({ text: 'x'.repeat(100) }).endsWith('…')).toBe(true);
    expect([formatCount(0), formatCount(999), formatCount(1234567)]).toEqual(['0', '999', '1,234,567']);
  });
});
