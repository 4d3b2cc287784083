/** Tests of the tree renderer and the live TTY writer against a fake terminal. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunTree } from '../../src/cli/run-tree.js';
import { LiveTreeWriter, formatCost, formatElapsed, formatModel, formatTokens, renderTree } from '../../src/cli/tree-renderer.js';
import type { TraceEvent } from '../../src/protocol/trace.js';
import { fakeTerminal, frameLines, hasAnsi, stripAnsi } from './fake-terminal.js';
import { musicEnd, musicEvents, musicStart } from './music-events.js';

function treeOf(events: TraceEvent[]): RunTree {
  const tree = new RunTree();
  for (const event of events) tree.apply(event);
  return tree;
}

/** Feeds the recorded events to a listener with the fake clock following the events' times. */
function play(listener: (event: TraceEvent) => void, events: TraceEvent[] = musicEvents): void {
  for (const event of events) {
    const at = Date.parse(event.ts);
    if (at > Date.now()) vi.advanceTimersByTime(at - Date.now());
    listener(event);
  }
}

describe('renderTree', () => {
  it('draws nested delegates with box-drawing branches, glyphs, call, delegations, model, step, tokens, cost and elapsed time', () => {
    const lines = renderTree(treeOf(musicEvents), { now: musicEnd });
    expect(lines).toEqual([
      '✓ producer · 2/2 done  replay:producer.cassette.json · step 2 · 1.8k→208 tok · $0.0056 · 1.9s · calls ✓2',
      '├─ ✓ composer · compose · 1/1 done  replay:producer.cassette.json · step 2 · 1.3k→170 tok · $0.0035 · 480ms · calls ✓2',
      '│  └─ ✓ sound-designer · synth  replay:producer.cassette.json · step 1 · 210→70 tok · $0.0007 · 0ms',
      '└─ ✓ sound-designer · design_sound  replay:producer.cassette.json · step 1 · 205→66 tok · $0.0006 · 40ms',
    ]);
  });

  it('shows a running run with a spinner, its elapsed time up to now, and $? for an unknown cost', () => {
    const tree = treeOf([
      { ts: '2026-01-01T00:00:00.000Z', event: 'run.started', run: 'run_a', parent: null, depth: 0, name: 'writer', model: 'openai:gpt-4.1-mini' },
      { ts: '2026-01-01T00:00:00.000Z', event: 'model.request', run: 'run_a', parent: null, depth: 0, step: 0 },
      {
        ts: '2026-01-01T00:00:00.500Z',
        event: 'model.response',
        run: 'run_a',
        parent: null,
        depth: 0,
        step: 0,
        model: 'openai:gpt-4.1-mini',
        usage: { inputTokens: 12_345, outputTokens: 67 },
        costUsd: null,
      },
    ]);
    const [line] = renderTree(tree, { now: Date.parse('2026-01-01T00:00:01.234Z') });
    expect(line).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] writer {2}openai:gpt-4\.1-mini · step 1 · 12k→67 tok · \$\? · 1\.2s$/);
  });

  it('shows a model call waiting to be retried, counting down, and drops it once the answer arrives', () => {
    const common = { run: 'run_a', parent: null, depth: 0 };
    const events: TraceEvent[] = [
      { ts: '2026-01-01T00:00:00.000Z', event: 'run.started', ...common, name: 'writer', model: 'openai:gpt-4.1-mini' },
      { ts: '2026-01-01T00:00:00.000Z', event: 'model.request', ...common, step: 0 },
      { ts: '2026-01-01T00:00:30.000Z', event: 'model.retry', ...common, step: 0, attempt: 1, reason: 'idle timeout', waitMs: 2000 },
    ];
    const tree = treeOf(events);
    const at = (time: string) => renderTree(tree, { now: Date.parse(time) })[0];
    expect(at('2026-01-01T00:00:30.500Z')).toMatch(/ · retry 1 in 1\.5s: idle timeout$/);
    expect(at('2026-01-01T00:00:33.000Z')).toMatch(/ · retry 1: idle timeout$/);
    tree.apply({ ts: '2026-01-01T00:00:34.000Z', event: 'model.response', ...common, step: 0, model: 'openai:gpt-4.1-mini', usage: {}, costUsd: 0 });
    expect(at('2026-01-01T00:00:34.000Z')).not.toContain('retry');
  });

  it('counts a wide fan-out’s delegations on the parent and labels each child by its call', () => {
    const top = { run: 'run_top', parent: null, depth: 0 };
    const at = (ms: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + ms).toISOString();
    const events: TraceEvent[] = [{ ts: at(0), event: 'run.started', ...top, name: 'orchestrator', model: 'openai:gpt-4.1' }];
    for (let index = 0; index < 100; index++) {
      const child = { run: `run_${index}`, parent: 'run_top', depth: 1 };
      const topic = index === 99 ? 'the long history of tides, moons and the harbours they flood' : `topic ${index}`;
      const params = { topic, _delegate: '/home/someone/requests/worker.json' };
      events.push(
        { ts: at(1), event: 'call.started', ...top, call: `0.${index}`, tool: 'worker', params, instance: null },
        {
          ts: at(1),
          event: 'delegate.started',
          ...top,
          call: `0.${index}`,
          child: child.run,
          delegate: '/home/someone/requests/worker.json',
          name: 'worker',
          model: null,
        },
        { ts: at(2), event: 'run.started', ...child, name: 'worker', model: 'openai:gpt-4.1-nano' },
      );
      if (index < 37) events.push({ ts: at(3), event: 'delegate.completed', ...top, call: `0.${index}`, child: child.run, usage: {} });
      else if (index < 39)
        events.push({ ts: at(3), event: 'delegate.failed', ...top, call: `0.${index}`, child: child.run, code: 'model_error', message: 'no' });
    }
    const lines = renderTree(treeOf(events), { now: Date.parse(at(5)) });
    expect(lines[0]).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] orchestrator · 37\/100 done · 2 failed · 61 running {2}openai:gpt-4\.1 · /);
    expect(lines[1]).toMatch(/^├─ ✓ worker · \{"topic":"topic 0"\} {2}openai:gpt-4\.1-nano · /);
    expect(lines[38]).toMatch(/^├─ ✗ worker · \{"topic":"topic 37"\} {2}/);
    // Meta-properties are left out, and long parameters are cut to a few dozen characters.
    expect(lines[100]).toMatch(/^└─ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] worker · \{"topic":"the long history of tides, mo… {2}openai/);
    expect(lines.join('\n')).not.toContain('_delegate');
    // A frame too short for the children still shows how they stand.
    expect(renderTree(treeOf(events), { now: Date.parse(at(5)), maxLines: 5 })[0]).toContain('orchestrator · 37/100 done · 2 failed · 61 running');
  });

  it('cuts lines to the width with an ellipsis and ends a tall tree with a count of the runs left out', () => {
    const tree = treeOf(musicEvents);
    const narrow = renderTree(tree, { now: musicEnd, width: 30 });
    expect(narrow.every((line) => Array.from(line).length <= 30)).toBe(true);
    expect(narrow[0]).toBe('✓ producer · 2/2 done  replay…');
    const short = renderTree(tree, { now: musicEnd, maxLines: 2 });
    expect(short).toHaveLength(2);
    expect(short[1]).toBe('… 3 more runs');
    // A frame of any height is the whole tree's first lines and a count of the rest, though the rest is never rendered.
    const whole = renderTree(tree, { now: musicEnd });
    for (let maxLines = 1; maxLines <= whole.length + 1; maxLines++) {
      const frame = renderTree(tree, { now: musicEnd, maxLines });
      if (maxLines >= whole.length) expect(frame).toEqual(whole);
      else expect(frame).toEqual([...whole.slice(0, maxLines - 1), `… ${whole.length - maxLines + 1} more runs`]);
    }
  });

  it('formats counts, costs, durations and replay models compactly', () => {
    expect([formatTokens(999), formatTokens(1234), formatTokens(56_789), formatTokens(2_500_000)]).toEqual(['999', '1.2k', '57k', '2.5M']);
    expect([formatCost(null), formatCost(0), formatCost(0.01234), formatCost(3.5)]).toEqual(['$?', '$0', '$0.0123', '$3.50']);
    // A fast-tier call's fraction of a cent keeps two significant digits rather than showing as $0.0000.
    expect([formatCost(0.000041), formatCost(0.0000078), formatCost(0.0001)]).toEqual(['$0.000041', '$0.0000078', '$0.0001']);
    expect([formatElapsed(340), formatElapsed(1234), formatElapsed(125_000)]).toEqual(['340ms', '1.2s', '2m05s']);
    expect(formatModel('replay:/tmp/x/producer.cassette.json')).toBe('replay:producer.cassette.json');
    expect(formatModel(null)).toBe('no model');
  });
});

describe('LiveTreeWriter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(musicStart);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('draws the first frame at once and redraws the tree in place, moving the cursor up over the previous frame', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: {} });
    play(writer.listener);
    writer.stop();
    const frames = terminal.chunks;
    expect(frames.length).toBeGreaterThan(2);
    expect(frames[0]).not.toMatch(/\u001b\[\d+A/);
    expect(frameLines(frames[0]!)).toEqual([expect.stringMatching(/ producer {2}replay:producer\.cassette\.json · starting · 0→0 tok · \$0 · 0ms$/)]);
    for (let index = 1; index < frames.length; index++) {
      const previousLines = frameLines(frames[index - 1]!).length;
      expect(frames[index]!.startsWith(`\r\u001b[${previousLines}A`)).toBe(true);
      expect(frames[index]).toContain('\u001b[2K');
    }
    const last = frameLines(frames[frames.length - 1]!);
    expect(last).toEqual([
      expect.stringMatching(/^✓ producer .* step 2 .* \$0\.0056 · 1\.9s/),
      expect.stringMatching(/^├─ ✓ composer /),
      expect.stringMatching(/^│ {2}└─ ✓ sound-designer /),
      expect.stringMatching(/^└─ ✓ sound-designer /),
    ]);
  });

  it('shows a nested delegate while it runs', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: {} });
    const nestedStarted = musicEvents.findIndex((event) => event.event === 'run.started' && event.run === 'run_sound_nested');
    play(writer.listener, musicEvents.slice(0, nestedStarted + 1));
    vi.advanceTimersByTime(100);
    const frame = frameLines(terminal.chunks[terminal.chunks.length - 1]!);
    expect(frame[1]).toMatch(/^├─ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] composer · compose · 0\/1 done · 1 running {2}replay:/);
    expect(frame[2]).toMatch(/^│ {2}└─ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] sound-designer .* starting/);
    expect(frame[3]).toMatch(/^└─ ✓ sound-designer /);
    writer.stop();
  });

  it('draws at most one frame per 100 ms however many events arrive', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: {} });
    for (const event of musicEvents) writer.listener(event);
    expect(terminal.chunks).toHaveLength(1);
    vi.advanceTimersByTime(99);
    expect(terminal.chunks).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(terminal.chunks).toHaveLength(2);
    // Nothing is running any more and nothing changed: no more frames.
    vi.advanceTimersByTime(1000);
    expect(terminal.chunks).toHaveLength(2);
    writer.stop();
  });

  it('keeps redrawing while a run is waiting, so its elapsed time moves', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: {} });
    play(writer.listener, musicEvents.slice(0, 2));
    // 160 ms in, waiting for the model: ten more ticks in the next second.
    vi.advanceTimersByTime(1000);
    expect(terminal.chunks.length).toBeGreaterThanOrEqual(10);
    expect(terminal.chunks.length).toBeLessThanOrEqual(12);
    expect(stripAnsi(terminal.chunks[terminal.chunks.length - 1]!)).toContain('· 1.1s');
    writer.stop();
  });

  it("truncates every line to the terminal's columns", () => {
    const terminal = fakeTerminal(40);
    const writer = new LiveTreeWriter(terminal, { env: {} });
    play(writer.listener);
    writer.stop();
    for (const chunk of terminal.chunks) {
      for (const line of frameLines(chunk)) expect(Array.from(line).length).toBeLessThanOrEqual(40);
    }
  });

  it('colours the tree on a terminal, and uses no colour when NO_COLOR is set', () => {
    const coloured = fakeTerminal();
    const writer = new LiveTreeWriter(coloured, { env: {} });
    play(writer.listener);
    writer.stop();
    expect(coloured.text()).toMatch(/\u001b\[32m✓\u001b\[39m/);

    const plain = fakeTerminal();
    const noColor = new LiveTreeWriter(plain, { env: { NO_COLOR: '1' } });
    play(noColor.listener);
    noColor.stop();
    const text = plain.text();
    expect(text).not.toMatch(/\u001b\[\d+m/);
    // Still redrawn in place: cursor movement is not colour.
    expect(text).toMatch(/\u001b\[\d+A/);
  });

  it('writes a logged line above the frame and redraws the frame below it', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: { NO_COLOR: '1' } });
    play(writer.listener, musicEvents.slice(0, 3));
    terminal.chunks.length = 0;
    writer.log('Approve "compose"?');
    expect(terminal.text()).toMatch(/^\r\u001b\[1A\u001b\[JApprove "compose"\?\n\r\u001b\[2K. producer/);
    writer.stop();
  });

  it('stops with a final frame and writes nothing afterwards', () => {
    const terminal = fakeTerminal();
    const writer = new LiveTreeWriter(terminal, { env: {} });
    play(writer.listener, musicEvents.slice(0, 5));
    writer.stop();
    const written = terminal.chunks.length;
    writer.stop();
    writer.listener(musicEvents[5]!);
    vi.advanceTimersByTime(1000);
    expect(terminal.chunks).toHaveLength(written);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes only to the stream it is given', () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write');
    const writer = new LiveTreeWriter(fakeTerminal(), { env: {} });
    play(writer.listener);
    writer.stop();
    expect(stdout).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
    stdout.mockRestore();
    stderr.mockRestore();
  });
});

describe('frames', () => {
  it('hold escapes only on a terminal', () => {
    expect(hasAnsi(renderTree(treeOf(musicEvents), { now: musicEnd }).join('\n'))).toBe(false);
  });
});
