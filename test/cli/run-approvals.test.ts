import { PassThrough, Writable } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/run.js';
import { readTrace, runCli, tempDir, waitFor } from '../helpers/cli.js';

const fixture = ['test/fixtures/approval/request.json', '--activities', 'test/fixtures/approval/activities.mjs'];

function sink(isTTY: boolean): Writable & { text(): string; isTTY: boolean } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text(): string; isTTY: boolean };
  stream.text = () => chunks.join('');
  stream.isTTY = isTTY;
  return stream;
}

describe('approvals from the command line', () => {
  it('rejects calls that need approval in strict mode and tells the model why', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([...fixture, '--approve', 'strict', '--trace', trace, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'not sent' });
    const events = readTrace(trace);
    expect(events.filter((event) => event.event === 'approval.decided').map((event) => event.decision)).toEqual(['rejected', 'rejected']);
    // Who decided is traced (TRACE-19): the strict mode.
    expect(events.filter((event) => event.event === 'approval.decided').map((event) => event.by)).toEqual(['policy:strict', 'policy:strict']);
    expect(events.filter((event) => event.event === 'call.failed').map((event) => (event.error as { code: string }).code)).toEqual([
      'rejected_by_user',
      'rejected_by_user',
    ]);
    // The draft call needs no approval: no approval events for it.
    expect(events.filter((event) => event.event === 'approval.requested').every((event) => event.tool === 'send')).toBe(true);
  });

  it('is strict by default when not at a terminal', async () => {
    const result = await runCli([...fixture, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ output: 'not sent' });
  });

  it('approves everything with approve_all', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([...fixture, '--approve', 'approve_all', '--trace', trace, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'sent' });
    expect(
      readTrace(trace)
        .filter((event) => event.event === 'approval.decided')
        .map((event) => event.decision),
    ).toEqual(['approved', 'approved']);
  });

  it('refuses an unknown mode with exit 2', async () => {
    const result = await runCli([...fixture, '--approve', 'sometimes']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('interactive, approve_all, strict');
  });

  it('asks at the terminal: approved for the session, the identical call is not asked again', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = sink(true);
    const stdout = sink(false);
    const trace = join(tempDir(), 'trace.jsonl');
    const running = main([...fixture, '--trace', trace, '--json'], { stdout, stderr, env: { NO_COLOR: '1' }, cwd: process.cwd(), stdin });
    await waitFor(() => stderr.text().includes('[y] approve once'));
    stdin.write('s\n');
    const status = await running;
    expect(status).toBe(0);
    expect(JSON.parse(stdout.text())).toMatchObject({ output: 'sent' });
    expect(stderr.text().match(/Approval needed/g)).toHaveLength(1);
    expect(
      readTrace(trace)
        .filter((event) => event.event === 'approval.decided')
        .map((event) => [event.decision, event.by]),
    ).toEqual([
      ['approved_session', 'person'],
      ['approved_session', 'session'],
    ]);
  });

  it('passes a rejection reason typed at the terminal to the model', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = sink(true);
    const trace = join(tempDir(), 'trace.jsonl');
    const running = main([...fixture, '--approve', 'interactive', '--trace', trace, '--json'], {
      stdout: sink(false),
      stderr,
      env: {},
      cwd: process.cwd(),
      stdin,
    });
    await waitFor(() => stderr.text().includes('[y] approve once'));
    stdin.write('n\n');
    await waitFor(() => stderr.text().includes('Reason'));
    stdin.write('wrong audience\n');
    await waitFor(() => (stderr.text().match(/\[y\] approve once/g) ?? []).length === 2);
    stdin.write('n\n');
    await waitFor(() => (stderr.text().match(/Reason/g) ?? []).length === 2);
    stdin.write('\n');
    expect(await running).toBe(0);
    const decided = readTrace(trace).filter((event) => event.event === 'approval.decided');
    expect(decided.map((event) => event.reason)).toEqual(['wrong audience', null]);
    const second = readTrace(trace).find((event) => event.event === 'model.request' && event.step === 1);
    expect(JSON.stringify(second)).toContain('wrong audience');
  });

  it('needs a terminal for interactive approvals', async () => {
    const result = await runCli([...fixture, '--approve', 'interactive']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('needs a terminal');
  });
});

describe('cancelling while an approval is asked', () => {
  it('stops asking and ends the run cancelled', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = sink(true);
    const controller = new AbortController();
    const trace = join(tempDir(), 'trace.jsonl');
    const running = main([...fixture, '--trace', trace, '--json'], {
      stdout: sink(false),
      stderr,
      env: {},
      cwd: process.cwd(),
      stdin,
      signal: controller.signal,
    });
    await waitFor(() => stderr.text().includes('[y] approve once'));
    controller.abort();
    expect(await running).toBe(130);
    expect(readTrace(trace).at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
  });
});
