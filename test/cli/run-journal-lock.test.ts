/** The journal's lock through the real CLI (spec/journal.md JOURNAL-11, spec/cli.md CLI-23): two resumes of one journal at once, one refused; a lock left by SIGKILL taken over; none left by SIGTERM. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, exited, readJournal, startCli, tempDir, waitFor } from '../helpers/cli.js';

const SHOP = {
  meta: { name: 'shop' },
  context: [
    { type: 'system', text: 'Prepare the order, charge it, then say done.' },
    {
      type: 'tool',
      tool: {
        prepare: { type: 'object', properties: {} },
        charge: { type: 'object', properties: { amount: { type: 'number' } } },
      },
    },
  ],
  schema: { type: 'string' },
};

const entry = (step: number, solution: unknown) => ({ match: { request: 'shop', step }, solution, usage: { inputTokens: 10, outputTokens: 5 } });

const CASSETTE = {
  version: 1,
  entries: [
    entry(0, { calls: [{ _tool: 'prepare' }], output: null }),
    entry(1, { calls: [{ _tool: 'charge', amount: 5 }], output: null }),
    entry(2, { calls: [], output: 'done' }),
  ],
};

/**
 * `prepare` waits for ever while BLOCK is set (a run to kill mid-call); `charge` is not idempotent:
 * it appends its process's pid to CHARGE_LOG, then waits up to 3 s for a second charge, so two
 * writers of one journal running at once would both be seen charging.
 */
const ACTIVITIES = `import { appendFileSync, readFileSync } from 'node:fs';
const charges = () => { try { return readFileSync(process.env.CHARGE_LOG, 'utf8').split('\\n').filter(Boolean).length; } catch { return 0; } };
export default {
  prepare: async () => {
    if (process.env.BLOCK) await new Promise((resolve) => setTimeout(resolve, 600_000));
    return 'prepared';
  },
  charge: Object.assign(async () => {
    appendFileSync(process.env.CHARGE_LOG, process.pid + '\\n');
    const until = Date.now() + 3000;
    while (charges() < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    return 'charged';
  }, { idempotent: false }),
};
`;

function setUp(): { folder: string; journal: string; lock: string; env: Record<string, string>; flags: string[] } {
  const folder = tempDir('journal-lock-');
  writeFileSync(join(folder, 'shop.json'), JSON.stringify(SHOP));
  writeFileSync(join(folder, 'shop.cassette.json'), JSON.stringify(CASSETTE));
  writeFileSync(join(folder, 'activities.mjs'), ACTIVITIES);
  const journal = join(folder, 'run.jsonl');
  const flags = [join(folder, 'shop.json'), '--model', `replay:${join(folder, 'shop.cassette.json')}`, '--activities', join(folder, 'activities.mjs')];
  return { folder, journal, lock: `${journal}.lock`, env: { CHARGE_LOG: join(folder, 'charges.log') }, flags };
}

function charges(env: Record<string, string>): string[] {
  const log = env.CHARGE_LOG as string;
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** Starts a run that blocks in `prepare`, and waits until its journal shows the call started. */
async function blockedRun(setup: ReturnType<typeof setUp>) {
  const started = startCli([...setup.flags, '--journal', setup.journal, '--quiet'], { env: { ...setup.env, BLOCK: '1' } });
  await waitFor(() => readJournal(setup.journal).some((event) => event.event === 'call.started' && event.tool === 'prepare'), 15_000);
  return started;
}

describe('the journal lock (JOURNAL-11)', () => {
  it('lets one of two resumes started at once on one journal run, refuses the other with exit 2 naming its holder, and charges once', async () => {
    const setup = setUp();
    // A run that stops cleanly after its first step: the journal to resume holds prepare done, charge to come.
    const first = await exited(
      startCli([...setup.flags, '--journal', setup.journal, '--max-steps', '1', '--quiet'], { env: setup.env }).done,
      'first run',
      30_000,
    );
    expect(first.code, first.stderr).toBe(1);
    expect(existsSync(setup.lock)).toBe(false);

    const resume = () => startCli(['--resume', setup.journal, '--max-steps', '4', '--approve', 'approve_all', '--json', '--quiet'], { env: setup.env });
    const one = resume();
    const two = resume();
    const results: CliResult[] = await Promise.all([exited(one.done, 'first resume', 30_000), exited(two.done, 'second resume', 30_000)]);
    const pids = [one.child.pid, two.child.pid];

    expect(results.map((result) => result.code).sort()).toEqual([0, 2]);
    const winner = results.findIndex((result) => result.code === 0);
    const loser = results[1 - winner] as CliResult;
    expect(JSON.parse((results[winner] as CliResult).stdout)).toMatchObject({ ok: true, output: 'done' });
    const refused = JSON.parse(loser.stdout);
    expect(refused).toMatchObject({ ok: false, error: { code: 'usage_error', pid: pids[winner], lock: setup.lock }, run: null });
    expect(refused.error.message).toContain(`process ${pids[winner]}`);
    // The non-idempotent Activity ran once, in the winner, and the journal is one resume's, whole.
    expect(charges(setup.env)).toEqual([String(pids[winner])]);
    const events = readJournal(setup.journal);
    expect(readFileSync(setup.journal, 'utf8').split('\n').filter(Boolean)).toHaveLength(events.length);
    expect(events.filter((event) => event.event === 'journal.resumed')).toHaveLength(1);
    expect(events.filter((event) => event.event === 'call.started' && event.tool === 'charge')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ event: 'run.completed', output: 'done' });
    expect(existsSync(setup.lock)).toBe(false);
  }, 60_000);

  it('takes over a lock left by a run killed with SIGKILL (its pid is gone): of two resumes finding it stale at once, one runs', async () => {
    const setup = setUp();
    const { child, done } = await blockedRun(setup);
    expect(JSON.parse(readFileSync(setup.lock, 'utf8'))).toMatchObject({ pid: child.pid, host: expect.any(String) });
    child.kill('SIGKILL');
    expect((await exited(done, 'killed run')).signal).toBe('SIGKILL');
    // Nothing ran to remove it: the lock is stale.
    expect(JSON.parse(readFileSync(setup.lock, 'utf8'))).toMatchObject({ pid: child.pid });

    const resume = () => exited(startCli(['--resume', setup.journal, '--json', '--quiet'], { env: setup.env }).done, 'resume', 30_000);
    const results = await Promise.all([resume(), resume()]);
    expect(results.map((result) => result.code).sort()).toEqual([0, 2]);
    const resumed = results.find((result) => result.code === 0) as CliResult;
    expect(JSON.parse(resumed.stdout)).toMatchObject({ ok: true, output: 'done' });
    expect(charges(setup.env)).toHaveLength(1);
    expect(readJournal(setup.journal).filter((event) => event.event === 'journal.resumed')).toHaveLength(1);
    expect(existsSync(setup.lock)).toBe(false);
  }, 60_000);

  it('refuses a second writer while the first lives, and releases the lock when the first is stopped by SIGTERM', async () => {
    const setup = setUp();
    const { child, done } = await blockedRun(setup);
    const second = await exited(startCli(['--resume', setup.journal, '--quiet'], { env: setup.env }).done, 'second writer', 30_000);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`is being written by process ${child.pid}`);
    child.kill('SIGTERM');
    expect((await exited(done, 'terminated run', 30_000)).code).toBe(143);
    expect(existsSync(setup.lock)).toBe(false);
    // Nothing of the refused writer reached the journal.
    expect(readJournal(setup.journal).filter((event) => event.event === 'journal.resumed')).toHaveLength(0);
  }, 60_000);
});
