// A boss Request delegating `count` tasks to a worker Request, with a replay cassette whose worker answers after `delayMs`: the queue tests' run trees.
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { folderWith } from './cli.js';

/** The boss schema of a fan-out folder: how many tasks were done. */
const DONE_SCHEMA = { type: 'object', properties: { done: { type: 'number' } }, required: ['done'] };

/** A boss Request (boss.json) with one tool, `work`, delegating `{ n }` to ./task.json; it answers `schema`. */
export function bossRequest(schema: object = DONE_SCHEMA): object {
  return {
    meta: { name: 'boss' },
    context: [
      { type: 'system', text: 'Hand out the tasks.' },
      { type: 'tool', tool: { work: { description: 'Does one task.', properties: { n: { type: 'number' } }, required: ['n'], _delegate: './task.json' } } },
    ],
    schema,
  };
}

/** A task Request (task.json) taking `{ n }` and answering a string, with `tools` (name to definition) besides. */
export function taskRequest(tools: Record<string, object> = {}): object {
  return {
    meta: { name: 'task' },
    context: [
      { type: 'system', text: 'Do the task.' },
      { type: 'input', schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
      ...Object.entries(tools).map(([name, tool]) => ({ type: 'tool', tool: { [name]: tool } })),
    ],
    schema: { type: 'string' },
  };
}

/** A folder holding boss.json, task.json and boss.cassette.json. */
export function fanOutFolder(count: number, options: { delayMs?: number; taskTokens?: number; approval?: boolean } = {}): string {
  const task = taskRequest(options.approval ? { launch: { description: 'Launches.', properties: {}, _approval: 'required' } } : {});
  const boss = bossRequest();
  const calls = Array.from({ length: count }, (_, n) => ({ _tool: 'work', n, _outputPath: `†state.r${n}` }));
  const taskEntries = options.approval
    ? [
        { match: { request: 'task', step: 0 }, solution: { calls: [{ _tool: 'launch' }], output: null }, usage: { inputTokens: 10, outputTokens: 5 } },
        { match: { request: 'task', step: 1 }, solution: { calls: [], output: 'gave up' }, usage: { inputTokens: 10, outputTokens: 5 } },
      ]
    : [
        {
          match: { request: 'task', step: 0 },
          repeat: true,
          ...(options.delayMs ? { delayMs: options.delayMs } : {}),
          solution: { calls: [], output: 'done' },
          usage: { inputTokens: options.taskTokens ?? 100, outputTokens: 10 },
        },
      ];
  const cassette = {
    version: 1,
    entries: [
      { match: { request: 'boss', step: 0 }, solution: { calls, output: null }, usage: { inputTokens: 300, outputTokens: 50 } },
      { match: { request: 'boss', step: 1 }, repeat: true, solution: { calls: [], output: { done: count } }, usage: { inputTokens: 400, outputTokens: 20 } },
      ...taskEntries,
    ],
  };
  return folderWith({ 'boss.json': boss, 'task.json': task, 'boss.cassette.json': cassette }, 'delegate-queue-');
}

/** The boss Request of a fan-out folder. */
export function bossOf(folder: string): string {
  return join(folder, 'boss.json');
}

/** The counts of the queue's jobs by state. */
export async function jobCounts(url: string, queueName = 'delegate-run'): Promise<Record<string, number>> {
  const parsed = new URL(url);
  const queue = new Queue(queueName, { connection: { host: parsed.hostname, port: Number(parsed.port), maxRetriesPerRequest: 1 } });
  try {
    return await queue.getJobCounts('active', 'waiting', 'completed', 'failed', 'delayed');
  } finally {
    await queue.close();
  }
}
