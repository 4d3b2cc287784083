/** Tests of the progress views the CLI chooses (src/cli/progress.ts), alone and through `main`. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createProgress, progressLine } from '../../src/cli/progress.js';
import { BATCH_ITEMS } from '../../src/files/batched-log.js';
import { main } from '../../src/cli/run.js';
import type { RunOutcome } from '../../src/cli/summary.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import { Tracer } from '../../src/protocol/trace.js';
import { fakePipe, fakeTerminal, frameLines, hasAnsi, stripAnsi } from './fake-terminal.js';
import { musicEvents } from './music-events.js';

const repository = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const finalEvent = musicEvents[musicEvents.length - 1]!;
const succeeded: RunOutcome = { ok: true, output: finalEvent.output, usageTotal: finalEvent.usageTotal as UsageSummary };
const musicArguments = ['requests/music/producer.json', '--input', '{"brief":"a slow ballad","ambience":"rain"}'];

function replay(tracer: Tracer): void {
  for (const event of musicEvents) tracer.emit(event);
}

describe('createProgress', () => {
  it('writes plain lines without ANSI escapes, then the summary, on a stream that is not a TTY', () => {
    const tracer = new Tracer();
    const stderr = fakePipe();
    const progress = createProgress(tracer, stderr, { env: {} });
    replay(tracer);
    progress.finish(succeeded);
    const text = stderr.text();
    expect(hasAnsi(text)).toBe(false);
    const lines = text.split('\n');
    expect(lines[0]).toBe('▶ producer (replay:requests/music/producer.cassette.json)');
    expect(lines).toContain('  ▶ composer (replay:requests/music/producer.cassette.json)');
    expect(lines).toContain('    ▶ sound-designer (replay:requests/music/producer.cassette.json)');
    expect(text).toContain('\n\n✓ producer done in 1.9s');
    expect(text).toContain('  tokens 3,515 in · 514 out');
  });

  it('prices every run in the summary when the run emits more events than the cost tree takes in one pass (BATCH_ITEMS)', () => {
    const tracer = new Tracer();
    const stderr = fakePipe();
    const progress = createProgress(tracer, stderr, { env: {}, quiet: false });
    const ts = '2026-11-23T10:00:00.000Z';
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const width = 400;
    const at = (run: string, parent: string | null, depth: number) => ({ ts, run, parent, depth });
    tracer.emit({ ...at('top', null, 0), event: 'run.started', request: 'top.json', name: 'top', model: 'openai:gpt-4.1', input: null });
    for (let index = 0; index < width; index++) {
      const child = `w${index}`;
      tracer.emit({
        ...at('top', null, 0),
        event: 'delegate.started',
        call: `0.${index}`,
        child,
        delegate: 'worker.json',
        name: 'worker',
        model: 'openai:gpt-4.1',
      });
      tracer.emit({ ...at(child, 'top', 1), event: 'run.started', request: 'worker.json', name: 'worker', model: 'openai:gpt-4.1', input: null });
      tracer.emit({ ...at(child, 'top', 1), event: 'model.response', step: 0, attempt: 0, solution: {}, model: 'openai:gpt-4.1', usage, costUsd: 0.01, ms: 1 });
      tracer.emit({ ...at(child, 'top', 1), event: 'run.completed', output: 'ok', usage: {}, usageTotal: {} });
    }
    tracer.emit({ ...at('top', null, 0), event: 'run.completed', output: 'done', usage: {}, usageTotal: {} });
    expect(4 * width + 2).toBeGreaterThan(BATCH_ITEMS);
    progress.finish(succeeded);
    const total = stderr
      .text()
      .split('\n')
      .find((line) => line.trim().startsWith('total'));
    expect(total).toMatch(/total +401 runs +400 +4,000 +2,000 +0 +0 +\$4\.00$/);
  });

  it('draws the live tree on a TTY, then leaves the final frame and the summary below it', () => {
    const tracer = new Tracer();
    const stderr = fakeTerminal();
    const progress = createProgress(tracer, stderr, { env: { NO_COLOR: '1' } });
    replay(tracer);
    progress.finish(succeeded);
    const chunks = stderr.chunks;
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks[chunks.length - 2]).toMatch(/^\r\u001b\[1A/);
    expect(frameLines(chunks[chunks.length - 2]!).map((line) => line.slice(0, 22))).toEqual([
      '✓ producer · 2/2 done ',
      '├─ ✓ composer · compos',
      '│  └─ ✓ sound-designer',
      '└─ ✓ sound-designer · ',
    ]);
    expect(chunks[chunks.length - 1]).toMatch(/^\n✓ producer done in 1\.9s/);
    expect(hasAnsi(chunks[chunks.length - 1]!)).toBe(false);
  });

  it('writes a plain line for each model retry, with its wait and reason', () => {
    const line = progressLine({
      ts: '2026-01-01T00:00:00.000Z',
      event: 'model.retry',
      run: 'run_a',
      parent: 'run_p',
      depth: 1,
      step: 2,
      attempt: 1,
      reason: '503 overloaded',
      waitMs: 500,
    });
    expect(line).toBe('    ↻ step 2: attempt 1 failed, retrying in 500ms: 503 overloaded');
  });

  it('writes a plain line for each model answer with its cost; a replayed one names the model it stands for (CAS-14)', () => {
    const answer = { ts: '2026-01-01T00:00:00.000Z', event: 'model.response', run: 'run_a', parent: null, depth: 0, step: 0, attempt: 0, ms: 12 };
    const usage = { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(progressLine({ ...answer, model: 'openai:gpt-4.1', usage, costUsd: 0.0048 })).toBe('  step 0: openai:gpt-4.1 1200→300 tokens $0.0048 12ms');
    expect(progressLine({ ...answer, model: 'replay:/x/c.json', replayOf: 'openai:gpt-4.1', usage, costUsd: 0.0048 })).toBe(
      '  step 0: openai:gpt-4.1 (replayed) 1200→300 tokens $0.0048 12ms',
    );
    expect(progressLine({ ...answer, model: 'test:unpriced', usage, costUsd: null })).toBe('  step 0: test:unpriced 1200→300 tokens 12ms');
  });

  it('writes a plain line for a call skipped because it was done (PLAN-10)', () => {
    const line = progressLine({
      ts: '2026-01-01T00:00:00.000Z',
      event: 'call.skipped',
      run: 'run_a',
      parent: null,
      depth: 0,
      call: '1.0',
      tool: 'issueRefund',
      reason: 'done',
    });
    expect(line).toBe('  ↷ issueRefund [1.0] skipped: done already');
  });

  it('writes nothing at all when quiet', () => {
    const tracer = new Tracer();
    const stderr = fakeTerminal();
    const progress = createProgress(tracer, stderr, { env: {}, quiet: true });
    replay(tracer);
    progress.finish(succeeded);
    expect(stderr.chunks).toEqual([]);
  });

  it('finishes once, and without a result ends the view without a summary', () => {
    const tracer = new Tracer();
    const stderr = fakePipe();
    const progress = createProgress(tracer, stderr, { env: {} });
    tracer.emit(musicEvents[0]!);
    progress.finish();
    progress.finish(succeeded);
    tracer.emit(musicEvents[1]!);
    expect(stderr.text()).toBe(`${progressLine(musicEvents[0]!)}\n`);
  });
});

describe('delegate-run progress', () => {
  it('keeps stdout to one JSON line with --json while the tree and summary go to stderr', async () => {
    const stdout = fakePipe();
    const stderr = fakeTerminal();
    const status = await main([...musicArguments, '--json'], { stdout, stderr, env: { NO_COLOR: '1' }, cwd: repository });
    expect(status).toBe(0);
    expect(stdout.chunks).toHaveLength(1);
    expect(JSON.parse(stdout.text())).toMatchObject({ ok: true, usage: { inputTokens: 3515, outputTokens: 514 } });
    const text = stripAnsi(stderr.text());
    // The composer and the direct sound designer start concurrently, so either may be drawn first.
    expect(text).toMatch(/[├└]─ ✓ composer /);
    expect(text).toMatch(/(│ {2}| {3})└─ ✓ sound-designer /);
    expect(text).toContain('tokens 3,515 in · 514 out');
    // Where the dollars went, run by run: the table `delegate-run report` prints (CLI-6, CLI-17).
    expect(text).toContain('  cost $0 (replayed) · 4 runs · 6 steps · 4 tool calls\n  cost by run\n');
    expect(text).toMatch(/\n {6}composer {11}replay:producer\.cassette\.json {2}- +2 +1,280 +170 +0 +0 +\$0 \(replayed\)\n/);
    expect(text).toMatch(/\n {4}total {16}4 runs +6 +3,515 +514 +0 +0 +\$0 \(replayed\)\n/);
  });

  it('prints plain progress lines when stderr is not a terminal', async () => {
    const stderr = fakePipe();
    const status = await main(musicArguments, { stdout: fakePipe(), stderr, env: {}, cwd: repository });
    expect(status).toBe(0);
    expect(hasAnsi(stderr.text())).toBe(false);
    expect(stderr.text()).toContain('▶ producer (');
    expect(stderr.text()).toContain('✓ producer done in');
  });

  it('shows no progress and no summary with --quiet', async () => {
    const stderr = fakeTerminal();
    const status = await main([...musicArguments, '--quiet'], { stdout: fakePipe(), stderr, env: {}, cwd: repository });
    expect(status).toBe(0);
    // Only the note that a cassette is replayed, which is not progress.
    expect(stderr.text()).toMatch(/^No --model given and no API key set: replaying .*\n$/);
  });
});
