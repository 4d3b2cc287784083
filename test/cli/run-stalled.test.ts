/** A run that can never finish, and `--activity-timeout`, through the real CLI (spec/cli.md CLI-26, CLI-27; spec/errors.md ERR-8). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, readJournal, startCli, tempDir } from '../helpers/cli.js';

const REQUEST = {
  meta: { name: 'waiter' },
  context: [
    { type: 'system', text: 'Call wait, then say done.' },
    { type: 'tool', tool: { wait: { type: 'object', properties: {} } } },
  ],
  schema: { type: 'string' },
};

const CASSETTE = {
  version: 1,
  entries: [
    { match: { request: 'waiter', step: 0 }, solution: { calls: [{ _tool: 'wait', _outputPath: '†state.waited' }], output: null } },
    // The answer after the call says what the model saw of it.
    { match: { request: 'waiter', step: 1, contains: 'activity timeout' }, solution: { calls: [], output: 'saw the timeout' } },
    { match: { request: 'waiter', step: 1 }, solution: { calls: [], output: 'done' } },
  ],
};

/** A folder with the request, its cassette and the Activities module `source`. */
function setUp(source: string): { folder: string; flags: string[] } {
  const folder = tempDir('stalled-');
  writeFileSync(join(folder, 'waiter.json'), JSON.stringify(REQUEST));
  writeFileSync(join(folder, 'waiter.cassette.json'), JSON.stringify(CASSETTE));
  writeFileSync(join(folder, 'activities.mjs'), source);
  const flags = [join(folder, 'waiter.json'), '--model', `replay:${join(folder, 'waiter.cassette.json')}`, '--activities', join(folder, 'activities.mjs')];
  return { folder, flags };
}

describe('a run that can never finish (CLI-27)', () => {
  it('fails, exit 1, when an Activity returns a promise nothing can settle: --json prints the failure naming the Activity and the call, and the trace ends with run.failed', async () => {
    const { folder, flags } = setUp('export default { wait: () => new Promise(() => {}) };\n');
    const trace = join(folder, 'trace.jsonl');
    const result = await exited(startCli([...flags, '--json', '--quiet', '--trace', trace]).done, 'stalled run', 30_000);
    expect(result.code, result.stderr).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({ ok: false, error: { code: 'activity_error', activity: 'wait', call: '0.0', toolName: 'wait' }, run: expect.any(String) });
    expect(printed.error.message).toMatch(/The Activity "wait" of the call 0\.0 to "wait" can never finish/);
    const events = readJournal(trace);
    expect(events.at(-2)).toMatchObject({ event: 'call.failed', call: '0.0', error: { code: 'activity_error' } });
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', run: printed.run, code: 'activity_error' });
  }, 60_000);

  it('says the failure on stderr without --json, and the journal ends with run.failed too', async () => {
    const { folder, flags } = setUp('export default { wait: () => new Promise(() => {}) };\n');
    const journal = join(folder, 'run.jsonl');
    const result = await exited(startCli([...flags, '--quiet', '--journal', journal]).done, 'stalled run', 30_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/activity_error: The Activity "wait" of the call 0\.0 to "wait" can never finish/);
    expect(readJournal(journal).at(-1)).toMatchObject({ event: 'run.failed', code: 'activity_error' });
  }, 60_000);
});

describe('--activity-timeout (CLI-26)', () => {
  /** An Activity that would wait a minute, and writes down why its signal was aborted. */
  const SLOW = `import { readFileSync, writeFileSync } from 'node:fs';
export default {
  wait: (call, tool, context, environment) => new Promise((resolve) => {
    const timer = setTimeout(resolve, 60_000);
    environment.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      writeFileSync(process.env.ABORTED, String(environment.signal.reason?.code));
    });
  }),
};
`;

  it('fails a call whose Activity runs longer as activity_error the model sees, aborting its signal; the run goes on', async () => {
    const { folder, flags } = setUp(SLOW);
    const trace = join(folder, 'trace.jsonl');
    const aborted = join(folder, 'aborted.txt');
    const result = await exited(
      startCli([...flags, '--json', '--quiet', '--trace', trace, '--activity-timeout', '0.5'], { env: { ABORTED: aborted } }).done,
      'timed-out call',
      30_000,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'saw the timeout' });
    const failed = readJournal(trace).find((event) => event.event === 'call.failed');
    expect(failed).toMatchObject({ call: '0.0', error: { code: 'activity_error', timeoutMs: 500 } });
    expect(JSON.stringify(failed?.error)).toContain('ran longer than the activity timeout of 0.5 s');
    expect(readFileSync(aborted, 'utf8')).toBe('activity_error');
  }, 60_000);

  it('refuses a timeout that is not a positive number of seconds (exit 2)', async () => {
    const { flags } = setUp('export default { wait: async () => 1 };\n');
    const result = await exited(startCli([...flags, '--activity-timeout', '0']).done, 'bad timeout');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--activity-timeout expects a positive number of seconds, got "0".');
  }, 30_000);
});
