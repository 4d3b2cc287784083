/** A journal flushed in groups (spec/journal.md JOURNAL-2) under a wide fan-out of the real CLI: no effect before the event recording it is in the journal, killed with SIGKILL and resumed, and far fewer flushes than events. */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournalText } from '../../src/files/journal-file.js';
import { BIN, type CliResult, exited, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { type LoopbackServer, startServer } from '../models/support/loopback.js';
import { openAIStreamEvents, openAIUsage } from '../models/support/openai-wire.js';

/** How many delegates the boss starts at once, each with an Activity of its own, beside as many Activities of the boss's. */
const WIDTH = 30;

const BOSS = {
  meta: { name: 'boss' },
  context: [
    { type: 'system', text: 'You are the boss. Delegate every topic and touch every item at once, then answer.' },
    {
      type: 'tool',
      tool: {
        research: { type: 'object', properties: { topic: { type: 'string' } }, _delegate: './helper.json' },
        touch: { type: 'object', properties: { item: { type: 'string' } }, _output: { type: 'string' } },
      },
    },
  ],
  schema: { type: 'string' },
};

const HELPER = {
  meta: { name: 'helper' },
  context: [
    { type: 'system', text: 'You are a helper. Touch the topic, then report it.' },
    { type: 'input', schema: { type: 'object', properties: { topic: { type: 'string' } } } },
    { type: 'tool', tool: { touch: { type: 'object', properties: { item: { type: 'string' } }, _output: { type: 'string' } } } },
  ],
  schema: { type: 'string' },
};

/**
 * The Activity module: `touch`, when it starts, reads the journal from the file and looks for its
 * own `call.started`, and writes one line per execution to EFFECT_LOG: its run, its call and
 * whether its event was there.
 */
const ACTIVITIES = `import { appendFileSync, readFileSync } from 'node:fs';
const touch = async (call, tool, context, environment) => {
  const journal = readFileSync(process.env.JOURNAL, 'utf8').split('\\n');
  const run = environment.run.id;
  const there = journal.some((line) => {
    if (!line.includes('"call.started"')) return false;
    const event = JSON.parse(line);
    return event.event === 'call.started' && event.run === run && event.call === environment.callId;
  });
  appendFileSync(process.env.EFFECT_LOG, run + ' ' + environment.callId + ' ' + (there ? 'journaled' : 'NOT-JOURNALED') + '\\n');
  await new Promise((resolve) => setTimeout(resolve, 5));
  return 'touched ' + call.item;
};
export default { touch };
`;

/** The answer to a prompt: the boss fans out, then answers; a helper touches its topic, then reports it. */
function answerFor(prompt: string): unknown {
  if (prompt.includes('You are the boss.')) {
    if (prompt.includes('touched b0')) return { calls: [], output: 'all done' };
    return {
      calls: Array.from({ length: WIDTH }, (_, n) => [
        { _tool: 'research', topic: `t${n}`, _outputPath: `†state.r${n}` },
        { _tool: 'touch', item: `b${n}`, _outputPath: `†state.b${n}` },
      ]).flat(),
      output: null,
    };
  }
  const topic = /"topic":\s*"(\w+)"/.exec(prompt)?.[1] ?? 'none';
  if (prompt.includes(`touched ${topic}`)) return { calls: [], output: `found ${topic}` };
  return { calls: [{ _tool: 'touch', item: topic, _outputPath: '†state.touched' }], output: null };
}

/** Which question a prompt asks: whose (the boss or a helper's topic) and at which step. */
function questionOf(prompt: string): string {
  const who = prompt.includes('You are the boss.') ? 'boss' : (/"topic":\s*"(\w+)"/.exec(prompt)?.[1] ?? '?');
  return `${who} step ${prompt.includes('touched') ? 1 : 0}`;
}

/** The journal the model's requests are checked against, and the requests that arrived before their model.request was in it. */
const watched: { journal: string | undefined; early: string[] } = { journal: undefined, early: [] };
let server: LoopbackServer;

beforeAll(async () => {
  server = await startServer([
    async (request, response) => {
      const prompt = (request.body.messages as Array<{ content: string }>).map((message) => message.content).join('\n');
      // A request goes out only once its model.request is in the journal (JOURNAL-2): the journal
      // holds at least as many model.request events as requests have arrived for it.
      if (watched.journal) {
        const held = readJournalText(readFileSync(watched.journal, 'utf8'), watched.journal).events.filter((event) => event.event === 'model.request');
        const asked = questionOf(prompt);
        if (!held.some((event) => questionOf((event.messages as Array<{ content: string }>).map((message) => message.content).join('\n')) === asked)) {
          watched.early.push(asked);
        }
      }
      const text = JSON.stringify(answerFor(prompt));
      // A little time per answer, so that a kill lands among the answers of a fan-out still running; the
      // boss's last answer takes a second, so the kill half-way through always lands before the run ends.
      await new Promise((resolve) => setTimeout(resolve, prompt.includes('You are the boss.') && prompt.includes('touched b0') ? 1000 : 10));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of openAIStreamEvents(text.match(/[\s\S]{1,200}/g) ?? [], openAIUsage(100, 20))) response.write(event);
      response.end();
    },
  ]);
});

afterAll(() => server.close());

/** A folder with the tree's Requests and Activities, a journal path, and the environment of its runs. */
function setUp(): { folder: string; journal: string; env: Record<string, string>; flags: string[] } {
  const folder = tempDir();
  writeFileSync(join(folder, 'boss.json'), JSON.stringify(BOSS));
  writeFileSync(join(folder, 'helper.json'), JSON.stringify(HELPER));
  writeFileSync(join(folder, 'activities.mjs'), ACTIVITIES);
  const journal = join(folder, 'run.jsonl');
  const env = { OPENAI_API_KEY: 'sk-test', JOURNAL: journal, EFFECT_LOG: join(folder, 'effects.log') };
  const flags = ['--model', 'openai:gpt-4.1-mini', '--base-url', `${server.url}/v1`, '--activities', join(folder, 'activities.mjs'), '--json'];
  watched.journal = journal;
  watched.early = [];
  return { folder, journal, env, flags };
}

/** The journal's events as a resume would read them: a line cut by the kill is left out (JOURNAL-7). */
function journaled(journal: string) {
  return existsSync(journal) ? readJournalText(readFileSync(journal, 'utf8'), journal).events : [];
}

/** Each execution of `touch`: run, call and whether its call.started was in the journal when it began. */
function effects(log: string): Array<{ run: string; call: string; seen: string }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [run = '', call = '', seen = ''] = line.split(' ');
      return { run, call, seen };
    });
}

/** True when strace can count this machine's system calls (a container may forbid ptrace). */
function canTrace(): boolean {
  return spawnSync('strace', ['-f', '-c', '-e', 'trace=fdatasync', process.execPath, '-e', '0'], { stdio: 'ignore' }).status === 0;
}

describe('a journal flushed in groups (JOURNAL-2), on a wide fan-out', () => {
  it('starts no Activity and sends no model request before the event recording it is in the journal; killed with SIGKILL, every effect that began is journaled and --resume ends the tree', async () => {
    const whole = setUp();
    const uninterrupted = await startCli([join(whole.folder, 'boss.json'), ...whole.flags, '--journal', whole.journal], { env: whole.env }).done;
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    expect(JSON.parse(uninterrupted.stdout).output).toBe('all done');
    expect(watched.early).toEqual([]);
    const done = effects(whole.env.EFFECT_LOG);
    expect(done).toHaveLength(2 * WIDTH);
    expect(done.filter((effect) => effect.seen !== 'journaled')).toEqual([]);
    const total = journaled(whole.journal).length;

    // Killed half-way through the fan-out: each effect that began has its call.started in what the kill left.
    const { folder, journal, env, flags } = setUp();
    const first = startCli([join(folder, 'boss.json'), ...flags, '--journal', journal], { env });
    await Promise.race([waitFor(() => journaled(journal).length >= Math.floor(total / 2), 15_000), first.done]);
    first.child.kill('SIGKILL');
    const killed = await exited(first.done, 'the killed run');
    // The kill landed while the run went on: otherwise what follows would check nothing.
    expect(killed.signal).toBe('SIGKILL');
    const left = journaled(journal);
    expect(left.some((event) => event.event === 'run.completed' && event.depth === 0)).toBe(false);
    const key = (event: { run: unknown; call?: unknown }) => `${String(event.run)} ${String(event.call)}`;
    const started = new Set(left.filter((event) => event.event === 'call.started').map(key));
    const began = effects(env.EFFECT_LOG);
    expect(began.length).toBeGreaterThan(0);
    expect(began.filter((effect) => !started.has(key(effect)))).toEqual([]);
    expect(watched.early).toEqual([]);

    const resumed: CliResult = await startCli(['--resume', journal, '--json'], { env }).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).output).toBe('all done');
    const all = effects(env.EFFECT_LOG);
    expect(all.filter((effect) => effect.seen !== 'journaled')).toEqual([]);
    expect(watched.early).toEqual([]);
    // Every item was touched; a call the kill left finished was not run again (JOURNAL-5).
    const items = new Set(journaled(journal).flatMap((event) => (event.event === 'call.completed' && event.tool === 'touch' ? [String(event.result)] : [])));
    expect(items.size).toBe(2 * WIDTH);
    const finished = left.filter((event) => event.event === 'call.completed' && event.tool === 'touch').map(key);
    for (const call of finished) expect(all.filter((effect) => key(effect) === call)).toHaveLength(1);
    // Generous: on a loaded machine each CLI start takes seconds; the bound is not a timing claim.
  }, 180_000);

  it.skipIf(!canTrace())(
    'flushes a turn of events with one fdatasync: far fewer flushes than events',
    async () => {
      const { folder, journal, env, flags } = setUp();
      watched.journal = undefined;
      const summary = join(folder, 'strace.txt');
      // Not execFileSync: the loopback model answers from this process's event loop.
      await promisify(execFile)(
        'strace',
        ['-f', '-c', '-e', 'trace=fdatasync', '-o', summary, process.execPath, BIN, join(folder, 'boss.json'), ...flags, '--journal', journal],
        {
          env: { ...process.env, ...env },
        },
      );
      const events = journaled(journal).length;
      // strace -c's row: % time, seconds, usecs/call, calls, [errors,] syscall.
      const row = readFileSync(summary, 'utf8')
        .split('\n')
        .find((line) => line.trim().endsWith(' fdatasync'));
      const flushes = Number(row?.trim().split(/\s+/)[3] ?? Number.NaN);
      // Each effect waits for one flush, and events of one turn share it: a flush per event would be `events`.
      expect(events).toBeGreaterThan(8 * WIDTH);
      expect(flushes).toBeLessThan(events / 4);
    },
    60_000,
  );
});
