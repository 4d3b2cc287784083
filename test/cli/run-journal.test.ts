/** `--journal` and `--resume` end to end (spec/journal.md, spec/cli.md CLI-22, CLI-23): the real CLI killed with SIGKILL mid-tree and resumed. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, exited, readJournal, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { type LoopbackServer, startServer } from '../models/support/loopback.js';
import { openAIStreamEvents, openAIUsage } from '../models/support/openai-wire.js';

const BOSS = {
  meta: { name: 'boss' },
  context: [
    { type: 'system', text: 'You are the boss. Research tides and winds in parallel, note it, then summarise.' },
    {
      type: 'tool',
      tool: {
        research: { type: 'object', properties: { topic: { type: 'string' } }, _delegate: './helper.json' },
        note: { type: 'object', properties: { text: { type: 'string' } }, _output: { type: 'string' } },
      },
    },
  ],
  schema: { type: 'string' },
};

const HELPER = {
  meta: { name: 'helper' },
  context: [
    { type: 'system', text: 'You are a helper. Note the topic, then report it.' },
    { type: 'input', schema: { type: 'object', properties: { topic: { type: 'string' } } } },
    { type: 'tool', tool: { note: { type: 'object', properties: { text: { type: 'string' } }, _output: { type: 'string' } } } },
  ],
  schema: { type: 'string' },
};

/** The Activity module: one line per execution of `note`, in the file NOTE_LOG names. */
const ACTIVITIES = `import { appendFileSync } from 'node:fs';
export default {
  note: async (call) => {
    appendFileSync(process.env.NOTE_LOG, call.text + '\\n');
    return 'noted ' + call.text;
  },
};
`;

/** The answer to a prompt: one per (run, step), each different, so the answers tell which was asked. */
function answerFor(prompt: string): unknown {
  if (prompt.includes('You are the boss.')) {
    if (prompt.includes('found tides') && prompt.includes('found winds')) return { calls: [], output: 'tides and winds, summarised' };
    return {
      calls: [
        { _tool: 'research', topic: 'tides', _outputPath: '†state.tides' },
        { _tool: 'research', topic: 'winds', _outputPath: '†state.winds' },
        { _tool: 'note', text: 'boss', _outputPath: '†state.noted' },
      ],
      output: null,
    };
  }
  const topic = /"topic":\s*"(\w+)"/.exec(prompt)?.[1] ?? 'none';
  if (prompt.includes(`noted ${topic}`)) return { calls: [], output: `found ${topic}` };
  return { calls: [{ _tool: 'note', text: topic, _outputPath: '†state.noted' }], output: null };
}

/** Runs the CLI to its end with the tree's environment (a key for the loopback model, where notes go). */
function runWith(args: string[], options: { env: Record<string, string> }): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Every answer the loopback model gave, as its JSON: what was paid for. */
const paid: string[] = [];
let server: LoopbackServer;

beforeAll(async () => {
  server = await startServer([
    async (request, response) => {
      const prompt = (request.body.messages as Array<{ content: string }>).map((message) => message.content).join('\n');
      const text = JSON.stringify(answerFor(prompt));
      paid.push(text);
      // A little time per answer, so that a kill lands between events of a tree still running.
      await new Promise((resolve) => setTimeout(resolve, 15));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of openAIStreamEvents(text.match(/[\s\S]{1,40}/g) ?? [], openAIUsage(100, 20))) response.write(event);
      response.end();
    },
  ]);
});

afterAll(() => server.close());

/** A folder holding the tree's Requests and Activities, and the environment of its runs. */
function setUp(): { folder: string; env: Record<string, string>; flags: string[] } {
  const folder = tempDir();
  writeFileSync(join(folder, 'boss.json'), JSON.stringify(BOSS));
  writeFileSync(join(folder, 'helper.json'), JSON.stringify(HELPER));
  writeFileSync(join(folder, 'activities.mjs'), ACTIVITIES);
  const env = { OPENAI_API_KEY: 'sk-test', NOTE_LOG: join(folder, 'notes.log') };
  const flags = ['--model', 'openai:gpt-4.1-mini', '--base-url', `${server.url}/v1`, '--activities', join(folder, 'activities.mjs'), '--json'];
  return { folder, env, flags };
}

function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

describe('delegate-run --journal and --resume', () => {
  let uninterrupted: { output: unknown; usage: Record<string, unknown>; events: number };

  beforeAll(async () => {
    const { folder, env, flags } = setUp();
    const journal = join(folder, 'run.jsonl');
    const result = await runWith([join(folder, 'boss.json'), ...flags, '--journal', journal], { env });
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout);
    uninterrupted = { output: parsed.output, usage: parsed.usage, events: readJournal(journal).length };
    expect(lines(env.NOTE_LOG).sort()).toEqual(['boss', 'tides', 'winds']);
  }, 120_000);

  it('resumes a tree killed with SIGKILL after any event to the uninterrupted output, paying no journaled answer again and running no finished call again', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: uninterrupted.events }), async (killAfter) => {
        const { folder, env, flags } = setUp();
        const journal = join(folder, 'run.jsonl');
        const first = startCli([join(folder, 'boss.json'), ...flags, '--journal', journal], { env });
        await Promise.race([waitFor(() => readJournal(journal).length >= killAfter, 15_000), first.done]);
        first.child.kill('SIGKILL');
        await exited(first.done, 'the killed run');
        const atKill = readJournal(journal);
        const answered = new Set(atKill.filter((event) => event.event === 'model.response').map((event) => JSON.stringify(event.solution)));
        const completed = atKill
          .filter((event) => event.event === 'call.completed' && event.tool === 'note')
          .map((event) => String((event.result as string).slice('noted '.length)));
        const paidBefore = paid.length;

        const resumed = await runWith(['--resume', journal, '--json'], { env });
        expect(resumed.code, resumed.stderr).toBe(0);
        const result = JSON.parse(resumed.stdout);
        expect(result.output).toEqual(uninterrupted.output);
        // Usage and cost of one uninterrupted run, wherever it was killed.
        for (const field of ['inputTokens', 'outputTokens', 'costUsd', 'steps', 'toolCalls']) expect(result.usage[field]).toEqual(uninterrupted.usage[field]);
        // No answer the journal held was asked for again.
        const askedAgain = paid.slice(paidBefore).filter((answer) => answered.has(answer));
        expect(askedAgain).toEqual([]);
        // The result counts exactly the answers the resume took from the journal (none beyond what it held;
        // answers inside a delegation that had finished are not needed again, its call's result is).
        const replayedEvents = readJournal(journal)
          .slice(atKill.length)
          .filter((event) => event.event === 'model.replayed');
        expect(result.replayed.modelCalls).toBe(replayedEvents.length);
        expect(replayedEvents.length).toBeLessThanOrEqual(atKill.filter((event) => event.event === 'model.response').length);
        // Each execution the journal saw finish happened exactly once; every note happened.
        const notes = lines(env.NOTE_LOG);
        for (const text of completed) expect(notes.filter((line) => line === text)).toHaveLength(1);
        expect([...new Set(notes)].sort()).toEqual(['boss', 'tides', 'winds']);
      }),
      { numRuns: 8 },
    );
    // Generous: on a loaded machine each CLI start takes seconds; the bound is not a timing claim.
  }, 600_000);

  it('resumes a journal cut in the middle of a line, ignoring the partial line and naming it', async () => {
    const { folder, env, flags } = setUp();
    const journal = join(folder, 'run.jsonl');
    const first = await runWith([join(folder, 'boss.json'), ...flags, '--journal', journal], { env });
    expect(first.code).toBe(0);
    const text = readFileSync(journal, 'utf8').split('\n');
    // The first 12 events whole, then half of the 13th.
    writeFileSync(journal, `${text.slice(0, 12).join('\n')}\n${(text[12] ?? '').slice(0, 30)}`);
    const resumed = await runWith(['--resume', journal, '--json'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).output).toEqual(uninterrupted.output);
    const events = readJournal(journal);
    const note = events.find((event) => event.event === 'journal.resumed');
    expect(note).toMatchObject({ events: 12, ignored: expect.stringMatching(/^line 13 \(30 bytes, cut off\): \{"ts"/) });
    // The partial line is gone: every line of the journal is whole again.
    expect(readFileSync(journal, 'utf8').split('\n').filter(Boolean)).toHaveLength(events.length);
  }, 120_000);

  it('says how many model calls it replayed, and refuses a request given again, a changed request and flags the journal decides', async () => {
    const { folder, env, flags } = setUp();
    const journal = join(folder, 'run.jsonl');
    expect((await runWith([join(folder, 'boss.json'), ...flags, '--journal', journal], { env })).code).toBe(0);
    // Cut after the top run's first answer: one answer to replay.
    const lines = readFileSync(journal, 'utf8').split('\n');
    const answer = lines.findIndex((line) => line.includes('"event":"model.response"'));
    writeFileSync(journal, `${lines.slice(0, answer + 1).join('\n')}\n`);

    const withRequest = await runWith([join(folder, 'boss.json'), '--resume', journal], { env });
    expect(withRequest.code).toBe(2);
    expect(withRequest.stderr).toMatch(/--resume .*run\.jsonl runs the journal's request \(.*boss\.json\); give no request with it/);
    const withInput = await runWith(['--resume', journal, '--input', '{}'], { env });
    expect(withInput.code).toBe(2);
    expect(withInput.stderr).toContain('--input cannot be given with --resume');

    writeFileSync(join(folder, 'boss.json'), JSON.stringify({ ...BOSS, context: [...BOSS.context, { type: 'system', text: 'Be brief.' }] }));
    const changed = await runWith(['--resume', journal], { env });
    expect(changed.code).toBe(2);
    expect(changed.stderr).toMatch(/The Request .*boss\.json changed since the journal .*run\.jsonl began .*--resume-changed/);

    const anyway = await runWith(['--resume', journal, '--resume-changed', '--max-steps', '6'], { env });
    expect(anyway.code, anyway.stderr).toBe(0);
    expect(anyway.stderr).toMatch(
      /Resumed from .*run\.jsonl: 1 model call replayed from the journal \(paid once, counted in the cost\), \d+ finished calls? not run again\./,
    );
    expect(readJournal(journal).find((event) => event.event === 'journal.resumed')).toMatchObject({ overrides: ['maxSteps'] });
  }, 180_000);

  it('refuses a journal that does not exist, and a trace written without --journal', async () => {
    const { folder, env, flags } = setUp();
    const missing = await runWith(['--resume', join(folder, 'none.jsonl')], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot resume from .*none\.jsonl: there is no such file\./);
    const trace = join(folder, 'trace.jsonl');
    expect((await runWith([join(folder, 'boss.json'), ...flags, '--trace', trace], { env })).code).toBe(0);
    const notJournal = await runWith(['--resume', trace], { env });
    expect(notJournal.code).toBe(2);
    expect(notJournal.stderr).toMatch(/has no journal\.started event: it is a trace \(--trace\), not a journal/);
  }, 120_000);
});
