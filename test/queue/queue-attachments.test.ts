// Attachments of a delegating call reach a child run on a worker process (QUEUE-2, ATT-6): the child's model, a loopback OpenAI server, receives the file's bytes; a refused attachment queues no job.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace, startCli, tempDir } from '../helpers/cli.js';
import { deckRoot } from '../helpers/deck-root.js';
import { jobCounts } from '../helpers/queue-fixture.js';
import { useQueuePool } from '../helpers/queue-pool.js';
import type { WorkerProcess } from '../helpers/queue-workers.js';
import { REDIS_SKIP_REASON, redisAvailable } from '../helpers/redis-server.js';
import { type LoopbackServer, type ReceivedRequest, startServer } from '../models/support/loopback.js';
import { openAIStream, openAIUsage } from '../models/support/openai-wire.js';

/** Bytes only the attached PDF holds: nothing else of the run contains them. */
const PDF = '%PDF-1.4 QUEUED-DECK-7f3a9c';
const ENV = { OPENAI_API_KEY: 'sk-test' };

/** The text of a chat request's messages, parts included. */
function promptOf(request: ReceivedRequest): string {
  return JSON.stringify(request.body.messages);
}

describe.skipIf(!redisAvailable)(
  redisAvailable ? 'attachments through the queue, on a real redis-server' : `queue attachment tests, ${REDIS_SKIP_REASON}`,
  () => {
    const queues = useQueuePool();
    let server: LoopbackServer;
    /** Which attachments the caller's model passes on, per test. */
    let attachments: string[] = [];
    /** How often the caller's model was asked in this test: first it delegates, then it answers. */
    let callerAsked = 0;

    beforeAll(async () => {
      server = await startServer([
        (request, response) => {
          const prompt = promptOf(request);
          const answer = prompt.includes('Evaluate the attached deck.')
            ? { calls: [], output: 'solid deck' }
            : callerAsked++ === 0
              ? { calls: [{ _tool: 'evaluate', focus: 'market', attachments, _outputPath: '†state.verdict' }], output: null }
              : { calls: [], output: 'done' };
          return openAIStream([JSON.stringify(answer)], openAIUsage(10, 5))(request, response);
        },
      ]);
    });

    afterAll(async () => {
      await server?.close();
    });

    async function run(root: string, queue: string) {
      callerAsked = 0;
      const trace = join(tempDir(), 'trace.jsonl');
      const flags = ['--model', 'openai:gpt-4.1-mini', '--base-url', `${server.url}/v1`, '--root', root, '--json', '--quiet', '--trace', trace];
      const result = await startCli([join(root, 'caller.json'), ...flags, '--queue', queues.redis.url, '--queue-name', queue], { env: ENV }).done;
      return { result, events: readTrace(trace) };
    }

    it("gives a child on a worker the attached PDF's bytes as a native part and the text file as a message", async () => {
      const root = deckRoot({ policy: { maxCount: 2, allowSuffixes: ['.pdf', '.txt'] }, pdf: PDF });
      const queue = `att${process.pid}-1`;
      const [worker] = (await queues.start(1, queue, ['--root', root, '--base-url', `${server.url}/v1`, '--model', 'openai:gpt-4.1-mini'], ENV)) as [
        WorkerProcess,
      ];
      attachments = ['input/deck.pdf', 'input/notes.txt'];
      const { result, events } = await run(root, queue);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'done' });
      // The child ran on the worker.
      const job = events.find((event) => event.event === 'queue.job');
      expect(String(job?.worker)).toMatch(new RegExp(`:${worker.child.pid}$`));
      // Its model received the PDF itself, as a file part, and the notes as text.
      const child = server.requests.filter((request) => promptOf(request).includes('Evaluate the attached deck.'));
      expect(child).toHaveLength(1);
      const messages = (child[0] as ReceivedRequest).body.messages as Array<{ content: unknown }>;
      const parts = messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
      const files = parts.filter((part: { type?: string }) => part.type === 'file') as Array<{ file: { filename: string; file_data: string } }>;
      expect(files.map((part) => part.file.filename)).toEqual(['input/deck.pdf']);
      expect(files[0]?.file.file_data).toBe(`data:application/pdf;base64,${Buffer.from(PDF).toString('base64')}`);
      expect(promptOf(child[0] as ReceivedRequest)).toContain('growth 40% a month');
      // The trace keeps no bytes (ATT-7), not even coming back from the worker.
      expect(JSON.stringify(events)).not.toContain('QUEUED-DECK');
      expect(JSON.stringify(events)).not.toContain(Buffer.from(PDF).toString('base64'));
    }, 60_000);

    it('refuses an attachment outside the root in the parent, with delegate_forbidden, and queues no job', async () => {
      const root = deckRoot({ policy: { maxCount: 2, allowSuffixes: ['.pdf', '.txt'] }, pdf: PDF });
      const queue = `att${process.pid}-2`;
      attachments = ['input/../secret.pdf'];
      const { result, events } = await run(root, queue);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(events.find((event) => event.event === 'call.failed')?.error).toMatchObject({ code: 'delegate_forbidden' });
      expect(events.some((event) => event.event === 'queue.job')).toBe(false);
      expect(await jobCounts(queues.redis.url, queue)).toMatchObject({ waiting: 0, active: 0, completed: 0, failed: 0 });
    }, 60_000);
  },
);
