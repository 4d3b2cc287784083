/** `--max-runs` and `--max-concurrency` through the built binary (CLI-11b, DEL-19, LOOP-16). */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrace, runCli, tempDir } from '../helpers/cli.js';

const FAN = 'test/fixtures/fan-out/fan.json';

describe('delegate-run run-tree bounds', () => {
  it('stops a self-delegating fan-out at --max-runs: exit 1, budget_exceeded, exactly that many runs started', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([FAN, '--max-runs', '12', '--trace', trace, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded', message: expect.stringContaining('12 runs') } });
    expect(readTrace(trace).filter((event) => event.event === 'run.started')).toHaveLength(12);
  });

  it('keeps at most --max-concurrency model calls in flight across the tree, as the trace shows', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    // With depth 1 the tree is the top run and its ten children: each child answers after 2 ms.
    const result = await runCli([FAN, '--max-depth', '1', '--max-concurrency', '2', '--trace', trace, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'done' });
    let inFlight = 0;
    let most = 0;
    for (const event of readTrace(trace)) {
      if (event.event === 'model.request') inFlight++;
      if (event.event === 'model.response') inFlight--;
      most = Math.max(most, inFlight);
    }
    expect(most).toBe(2);
  });

  it('refuses a --max-runs or --max-concurrency that is not a whole number of at least 1 (exit 2)', async () => {
    for (const [flag, value] of [
      ['--max-runs', '0'],
      ['--max-concurrency', '0'],
    ] as const) {
      const result = await runCli([FAN, flag, value, '--json']);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'usage_error', message: expect.stringContaining(flag) } });
    }
  });
});
