/**
 * The built `delegate-run` under attack and faults: trace paths that name inputs (CLI-15), exiting
 * despite work an Activity left behind (CLI-16), SIGTERM/SIGHUP (CLI-13), trace write failures
 * (TRACE-13, TRACE-14) and Activity results that are not JSON (TOOL-20).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { joinNegativeNumbers, parseArguments } from '../../src/cli/run-setup.js';
import { exited, readTrace, runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';

/** The weather example copied to a fresh folder, with a delegate and an input file beside it. */
function weatherCopy() {
  const folder = tempDir();
  for (const file of ['forecast.json', 'forecast.cassette.json', 'activities.mjs']) copyFileSync(join('requests/weather', file), join(folder, file));
  const delegate = join(folder, 'helper.json');
  writeFileSync(delegate, JSON.stringify({ context: [{ type: 'user', text: 'help' }], schema: { type: 'string' } }, null, 2));
  const input = join(folder, 'input.json');
  writeFileSync(input, '{"city":"Lisbon","activity":"cycling"}\n');
  const args = (...extra: string[]) => [join(folder, 'forecast.json'), '--activities', join(folder, 'activities.mjs'), '--input', `@${input}`, ...extra];
  return { folder, delegate, input, args };
}

describe('--trace and --record never replace an input of the run (CLI-15)', () => {
  const cases: [string, (copy: ReturnType<typeof weatherCopy>) => string][] = [
    ['the request', (copy) => join(copy.folder, 'forecast.json')],
    ['the cassette beside the request', (copy) => join(copy.folder, 'forecast.cassette.json')],
    ['the --activities module', (copy) => join(copy.folder, 'activities.mjs')],
    ['the --input file', (copy) => copy.input],
    ['a delegate the run could load', (copy) => copy.delegate],
  ];
  for (const [what, pick] of cases) {
    it(`refuses --trace naming ${what} with exit 2 and leaves it byte-identical`, async () => {
      const copy = weatherCopy();
      const target = pick(copy);
      const before = readFileSync(target);
      const result = await runCli(copy.args('--trace', target, '--quiet'));
      // What the CLI said goes with a failure, so a rare one on a CI machine can be read.
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('--trace');
      expect(result.stderr).toContain('Choose another file');
      expect(readFileSync(target).equals(before)).toBe(true);
    });
  }

  it('refuses --trace naming the replayed cassette through a symbolic path, and --record naming the request', async () => {
    const copy = weatherCopy();
    const cassette = join(copy.folder, 'forecast.cassette.json');
    const before = readFileSync(cassette);
    mkdirSync(join(copy.folder, 'sub'));
    const traced = await runCli(copy.args('--model', `replay:${cassette}`, '--trace', join(copy.folder, 'sub', '..', 'forecast.cassette.json'), '--json'));
    expect(traced.code).toBe(2);
    expect(JSON.parse(traced.stdout)).toMatchObject({ ok: false, error: { code: 'usage_error', message: expect.stringContaining('replayed cassette') } });
    expect(readFileSync(cassette).equals(before)).toBe(true);

    const request = join(copy.folder, 'forecast.json');
    const requestBefore = readFileSync(request);
    const recorded = await runCli(copy.args('--record', request, '--quiet'));
    expect(recorded.code).toBe(2);
    expect(recorded.stderr).toContain('--record');
    expect(readFileSync(request).equals(requestBefore)).toBe(true);
  });

  it('replaces an earlier trace at the same path (JSON Lines is not an input)', async () => {
    const copy = weatherCopy();
    const trace = join(copy.folder, 'trace.json');
    expect((await runCli(copy.args('--trace', trace, '--quiet'))).code).toBe(0);
    const second = await runCli(copy.args('--trace', trace, '--quiet'));
    expect(second.code).toBe(0);
    expect(readTrace(trace).at(-1)).toMatchObject({ event: 'run.completed' });
  });
});

describe('trace files that cannot be written (TRACE-14)', () => {
  it('reports a trace path that cannot be opened as a one-line usage error, exit 2', async () => {
    const result = await runCli(['requests/plan/welcome.json', '--input', '{"name":"Ada"}', '--trace', '/nonexistent/dir/t.jsonl', '--quiet']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^delegate-run: --trace \/nonexistent\/dir\/t\.jsonl: cannot open .*ENOENT/)]);
  });

  it.skipIf(!existsSync('/dev/full'))('fails a run whose trace cannot be written (/dev/full): exit 1, said once, and in the --json result', async () => {
    const result = await runCli(['requests/plan/welcome.json', '--input', '{"name":"Ada"}', '--trace', '/dev/full', '--quiet', '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr.match(/trace \/dev\/full is incomplete/g)).toHaveLength(1);
    expect(result.stderr).toContain('ENOSPC');
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      output: { title: 'Welcome aboard, Ada!' },
      traceError: expect.stringContaining('ENOSPC'),
    });
  });

  it('refuses an input nested too deeply before the trace is opened: nothing runs, nothing is lost (DOC-10)', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const folder = tempDir();
    writeFileSync(join(folder, 'deep.json'), deep);
    const result = await runCli(['requests/plan/welcome.json', '--input', `@${join(folder, 'deep.json')}`, '--trace', trace, '--quiet']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nested at most 100 levels deep');
    expect(existsSync(trace)).toBe(false);
  });
});

describe('exiting (CLI-13, CLI-16)', () => {
  it('exits 0 once the output is printed, though an Activity left a timer and a server open; piped output is whole', async () => {
    const size = 4_000_000;
    const result = await exited(
      runCli([
        'test/fixtures/hardening/lingering.json',
        '--activities',
        'test/fixtures/hardening/lingering.mjs',
        '--input',
        `{"size":${size}}`,
        '--json',
        '--quiet',
      ]),
      'lingering Activity',
    );
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { ok: boolean; output: string };
    expect(printed.ok).toBe(true);
    expect(printed.output).toHaveLength(size);
    expect(printed.output.endsWith('!')).toBe(true);
  });

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`cancels on ${signal} while a child's Activity ignores its signal: exit ${status}, every run ends cancelled`, async () => {
      const trace = join(tempDir(), 'trace.jsonl');
      const { child, done } = startCli(['test/fixtures/slow/request.json', '--activities', 'test/fixtures/hardening/stubborn.mjs', '--trace', trace]);
      await waitFor(() => existsSync(trace) && readTrace(trace).some((event) => event.event === 'call.started' && event.depth === 1));
      child.kill(signal);
      const result = await exited(done, signal);
      expect(result.code).toBe(status);
      const events = readTrace(trace);
      expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user', depth: 0 });
      const runs = new Set(events.map((event) => event.run));
      for (const run of runs) expect(events.filter((event) => event.run === run).at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
      expect(runs.size).toBe(2);
    });
  }
});

describe('Activity results that are not JSON (TOOL-20)', () => {
  it('fails each such call as activity_error; the run goes on, its trace complete, --json with output', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['test/fixtures/hardening/odd.json', '--activities', 'test/fixtures/hardening/odd.mjs', '--trace', trace, '--json', '--quiet']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'survived' });
    const events = readTrace(trace);
    const failed = events.filter((event) => event.event === 'call.failed');
    expect(failed.map((event) => (event.error as { code: string }).code)).toEqual(Array(6).fill('activity_error'));
    for (const event of failed) expect((event.error as { message: string }).message).toContain('the result is not JSON');
    expect(events.find((event) => event.event === 'call.completed')).toMatchObject({ result: { when: '1970-01-01T00:00:00.000Z', list: [1, 'two'] } });
    expect(events.at(-1)).toMatchObject({ event: 'run.completed', output: 'survived' });
  });
});

describe('negative numbers for options (CLI-11)', () => {
  const usage = (argv: string[]) => {
    try {
      parseArguments(['requests/plan/welcome.json', ...argv], process.cwd());
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };

  it('gives the option its own range message, whether the number is joined with = or not', () => {
    expect(usage(['--max-steps', '-5'])).toBe('--max-steps expects a whole number of at least 1, got "-5".');
    expect(usage(['--max-steps=-5'])).toBe('--max-steps expects a whole number of at least 1, got "-5".');
    expect(usage(['--max-depth', '-1'])).toBe('--max-depth expects a whole number of at least 0, got "-1".');
    expect(usage(['--budget-tokens', '-3'])).toBe('--budget-tokens expects a whole number of at least 1, got "-3".');
    expect(usage(['--budget-usd', '-1'])).toBe('--budget-usd expects a positive amount of US dollars, got "-1".');
    expect(usage(['--budget-usd', '-.5'])).toBe('--budget-usd expects a positive amount of US dollars, got "-.5".');
  });

  it('passes a negative number to any option taking a value, and leaves the rest of the command line alone', () => {
    expect(parseArguments(['requests/plan/welcome.json', '--input', '-5'], process.cwd())).toMatchObject({ input: -5 });
    expect(joinNegativeNumbers(['r.json', '--quiet', '--max-steps', '-2', '--', '--x', '-3'])).toEqual([
      'r.json',
      '--quiet',
      '--max-steps=-2',
      '--',
      '--x',
      '-3',
    ]);
  });

  it('says so through the binary too, exit 2', async () => {
    const result = await runCli(['requests/plan/welcome.json', '--max-steps', '-5']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--max-steps expects a whole number of at least 1, got "-5".');
    expect(result.stderr).not.toContain('ambiguous');
  });
});
