// A journaled tree on the queue (QUEUE-12 to QUEUE-16): the journal holds the workers' events, and a parent SIGKILLed mid-tree resumes with --queue, the children in flight replaying their journaled answers on the workers; on a real redis-server with two delegate-worker processes and a loopback model.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, readJournal, startCli, tempDir, waitFor } from '../helpers/cli.js';
// Its `note` tool is latent here: the command lines give no Activities, so the model writes the note (TOOL-5).
import { HELPER } from '../helpers/journal-tree.js';
import { startWorkers, stopWorkers, type WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { type LoopbackServer, startServer } from '../models/support/loopback.js';
import { openAIStreamEvents, openAIUsage } from '../models/support/openai-wire.js';

const QUEUE = 'journal';
const TOPICS = ['a', 'b', 'c', 'd'];
/** Topics whose second answer is slow: their children are still running when the parent is killed. */
const SLOW = new Set(['c', 'd']);
const SLOW_MS = 6000;

const BOSS = {
  meta: { name: 'boss' },
  context: [
    { type: 'system', text: 'You are the boss. Research every topic in parallel, then summarise.' },
    { type: 'tool', tool: { research: { type: 'object', properties: { topic: { type: 'string' } }, _delegate: './helper.json' } } },
  ],
  schema: { type: 'string' },
};

/** The answer to a prompt: one per (run, step), each different, so an answer tells which was asked. */
function answerFor(prompt: string): { solution: unknown; delayMs: number } {
  if (prompt.includes('You are the boss.')) {
    if (TOPICS.every((topic) => prompt.includes(`found ${topic}`))) return { solution: { calls: [], output: `summary of ${TOPICS.join(', ')}` }, delayMs: 10 };
    return { solution: { calls: TOPICS.map((topic) => ({ _tool: 'research', topic, _outputPath: `†state.${topic}` })), output: null }, delayMs: 10 };
  }
  const topic = /"topic":\s*"(\w+)"/.exec(prompt)?.[1] ?? 'none';
  if (prompt.includes(`noted ${topic}`)) return { solution: { calls: [], output: `found ${topic}` }, delayMs: SLOW.has(topic) ? SLOW_MS : 10 };
  return { solution: { calls: [{ _tool: 'note', text: topic, _output: `noted ${topic}`, _outputPath: '†state.noted' }], output: null }, delayMs: 10 };
}

type Event = Record<string, unknown> & { event: string };

/** A research call the journal shows finished. */
const finishedResearch = (event: Event) => event.event === 'call.completed' && event.tool === 'research';

describe.skipIf(!redisAvailable)(redisAvailable ? 'a journaled tree on the queue' : `queue journal tests, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  let server: LoopbackServer;
  let workers: WorkerProcess[] = [];
  /** Every answer the loopback model gave, as its JSON: what was paid for. */
  const paid: string[] = [];
  const env = { OPENAI_API_KEY: 'sk-test' };
  const root = tempDir();

  beforeAll(async () => {
    server = await startServer([
      async (request, response) => {
        const prompt = (request.body.messages as Array<{ content: string }>).map((message) => message.content).join('\n');
        const { solution, delayMs } = answerFor(prompt);
        const text = JSON.stringify(solution);
        paid.push(text);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const event of openAIStreamEvents(text.match(/[\s\S]{1,40}/g) ?? [], openAIUsage(100, 20))) response.write(event);
        response.end();
      },
    ]);
    redis = await startRedis();
    // The trees' folders are under one root, the workers' own, and their jobs ask for the one model the workers are given (QUEUE-23).
    workers = await startWorkers(
      redis.url,
      2,
      ['--queue-name', QUEUE, '--concurrency', '2', '--base-url', `${server.url}/v1`, '--root', root, '--model', 'openai:gpt-4.1-mini'],
      env,
    );
  });

  afterAll(async () => {
    await stopWorkers(workers);
    await redis?.stop();
    await server?.close();
  });

  function setUp(): { folder: string; boss: string; flags: string[] } {
    const folder = mkdtempSync(join(root, 'tree-'));
    writeFileSync(join(folder, 'boss.json'), JSON.stringify(BOSS));
    writeFileSync(join(folder, 'helper.json'), JSON.stringify(HELPER));
    return {
      folder,
      boss: join(folder, 'boss.json'),
      flags: ['--model', 'openai:gpt-4.1-mini', '--base-url', `${server.url}/v1`, '--root', root, '--json', '--quiet'],
    };
  }

  const queued = ['--queue', '', '--queue-name', QUEUE];
  const queue = () => queued.map((flag) => (flag === '' ? redis.url : flag));

  it('journals the workers’ events and resumes a parent killed mid-tree on the workers, replaying the children’s journaled answers by place', async () => {
    // Uninterrupted, through the queue: the journal holds every child's events, relayed from the workers.
    const whole = setUp();
    const wholeJournal = join(whole.folder, 'run.jsonl');
    const uninterrupted = await startCli([whole.boss, ...whole.flags, ...queue(), '--journal', wholeJournal], { env }).done;
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    const expected = JSON.parse(uninterrupted.stdout);
    expect(expected.output).toBe('summary of a, b, c, d');
    const wholeEvents = readJournal(wholeJournal);
    expect(wholeEvents.filter((event) => event.event === 'queue.job')).toHaveLength(4);
    expect(wholeEvents.filter((event) => event.event === 'model.response' && event.depth === 1)).toHaveLength(8);
    expect(wholeEvents.filter((event) => event.event === 'run.completed' && event.depth === 1)).toHaveLength(4);

    // Killed once two children finished and the two slow ones are waiting for their second answer.
    const { folder, boss, flags } = setUp();
    const journal = join(folder, 'run.jsonl');
    const first = startCli([boss, ...flags, ...queue(), '--journal', journal], { env });
    await waitFor(() => {
      const events = readJournal(journal);
      return (
        events.filter(finishedResearch).length >= 2 &&
        events.filter((event) => event.event === 'model.response' && event.depth === 1 && event.step === 0).length >= 4
      );
    }, 60_000);
    first.child.kill('SIGKILL');
    await exited(first.done, 'the killed parent');
    const atKill = readJournal(journal);
    // A delegation is reused on resume once its call is journaled finished (JOURNAL-5); the others run again.
    const inFlight = atKill.filter((event) => event.event === 'delegate.started').length - atKill.filter(finishedResearch).length;
    expect(inFlight).toBeGreaterThan(0);
    const answered = new Set(atKill.filter((event) => event.event === 'model.response').map((event) => JSON.stringify(event.solution)));
    // The same journal, resumed a second way below: in process.
    const inProcess = join(folder, 'in-process.jsonl');
    copyFileSync(journal, inProcess);

    const paidBefore = paid.length;
    const resumed = await startCli(['--resume', journal, '--json', '--quiet', ...queue()], { env }).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout);
    expect(result.output).toEqual(expected.output);
    for (const field of ['inputTokens', 'outputTokens', 'steps', 'toolCalls']) expect(result.usage[field]).toEqual(expected.usage[field]);
    // The children in flight ran again on the workers with their journaled answers replayed, not asked.
    const appended = readJournal(journal).slice(atKill.length);
    const replayedChildren = appended.filter((event) => event.event === 'model.replayed' && event.depth === 1);
    expect(replayedChildren.length).toBeGreaterThanOrEqual(inFlight);
    // The count includes the children's answers: the boss's first answer and each child's first.
    expect(result.replayed.modelCalls).toBe(appended.filter((event) => event.event === 'model.replayed').length);
    expect(result.replayed.modelCalls).toBe(1 + replayedChildren.length);
    const rerun = appended.filter((event) => event.event === 'queue.job');
    expect(rerun).toHaveLength(inFlight);
    for (const job of rerun) expect(String(job.job)).toBe(`${String(job.run)}~1`);
    expect(appended.filter((event) => event.event === 'run.resumed' && event.depth === 1)).toHaveLength(inFlight);
    // No answer the journal held was asked of the model again.
    expect(paid.slice(paidBefore).filter((answer) => answered.has(answer))).toEqual([]);
    // The killed session was cancelled before the resumed one queued its first child (QUEUE-14); the resumed one was not.
    const root = String(atKill[0]?.run);
    const client = new Redis(redis.port, '127.0.0.1');
    try {
      expect(await client.exists(`delegate-run:${QUEUE}:cancelled:${root}`)).toBe(1);
      expect(await client.exists(`delegate-run:${QUEUE}:cancelled:${root}~1`)).toBe(0);
    } finally {
      client.disconnect();
    }

    // Resumed without the queue, in process, the same journal ends the same way (QUEUE-16).
    const paidBeforeLocal = paid.length;
    const local = await startCli(['--resume', inProcess, '--json', '--quiet'], { env }).done;
    expect(local.code, local.stderr).toBe(0);
    expect(JSON.parse(local.stdout).output).toEqual(expected.output);
    expect(JSON.parse(local.stdout).replayed.modelCalls).toBe(result.replayed.modelCalls);
    expect(paid.slice(paidBeforeLocal).filter((answer) => answered.has(answer))).toEqual([]);
  }, 180_000);
});
