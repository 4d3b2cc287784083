// Two-level run trees for the queue tests: a boss delegating tasks that delegate parts further, replayed from a cassette; its parts may call an Activity that hangs until its signal aborts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { folderWith } from './cli.js';

/** What a nested tree's parts do: answer at once, or call `hang`, the Activity of `hang.mjs`, which waits for its signal. */
export interface NestedTreeOptions {
  hang?: boolean;
}

/**
 * A folder holding boss.json (delegating `tasks` calls of `work` to task.json), task.json
 * (delegating `parts` calls of `part` to part.json), part.json, boss.cassette.json and hang.mjs,
 * whose Activity `hang` writes `<folder>/hang-aborted` once its signal aborts.
 */
export function nestedTreeFolder(tasks: number, parts: number, options: NestedTreeOptions = {}): string {
  const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties) });
  const delegating = (name: string, tool: string, to: string, input: boolean) => ({
    meta: { name },
    context: [
      { type: 'system', text: `Hand out the ${tool}s.` },
      ...(input ? [{ type: 'input', schema: object({ n: { type: 'number' } }) }] : []),
      { type: 'tool', tool: { [tool]: { description: `Does one ${tool}.`, ...object({ n: { type: 'number' } }), _delegate: to } } },
    ],
    schema: { type: 'string' },
  });
  const part = {
    meta: { name: 'part' },
    context: [
      { type: 'system', text: 'Do the part.' },
      { type: 'input', schema: object({ n: { type: 'number' } }) },
      ...(options.hang ? [{ type: 'tool', tool: { hang: { description: 'Waits.', properties: {} } } }] : []),
    ],
    schema: { type: 'string' },
  };
  const calls = (tool: string, count: number) => Array.from({ length: count }, (_, n) => ({ _tool: tool, n, _outputPath: `†state.r${n}` }));
  const usage = { inputTokens: 10, outputTokens: 5 };
  const cassette = {
    version: 1,
    entries: [
      { match: { request: 'boss', step: 0 }, solution: { calls: calls('work', tasks), output: null }, usage },
      { match: { request: 'boss', step: 1 }, repeat: true, solution: { calls: [], output: 'boss done' }, usage },
      { match: { request: 'task', step: 0 }, repeat: true, solution: { calls: calls('part', parts), output: null }, usage },
      { match: { request: 'task', step: 1 }, repeat: true, solution: { calls: [], output: 'task done' }, usage },
      options.hang
        ? { match: { request: 'part', step: 0 }, repeat: true, solution: { calls: [{ _tool: 'hang' }], output: null }, usage }
        : { match: { request: 'part', step: 0 }, repeat: true, solution: { calls: [], output: 'part done' }, usage },
      { match: { request: 'part', step: 1 }, repeat: true, solution: { calls: [], output: 'part done' }, usage },
    ],
  };
  const folder = folderWith(
    {
      'boss.json': delegating('boss', 'work', './task.json', false),
      'task.json': delegating('task', 'part', './part.json', true),
      'part.json': part,
      'boss.cassette.json': cassette,
    },
    'delegate-queue-tree-',
  );
  const marker = JSON.stringify(join(folder, 'hang-aborted'));
  writeFileSync(
    join(folder, 'hang.mjs'),
    `import { writeFileSync } from 'node:fs';\n` +
      `// Hangs until its run is cancelled, then says so in a file.\n` +
      `export default { hang: (_call, _tool, _context, { signal }) => new Promise((_, fail) => signal.addEventListener('abort', () => { writeFileSync(${marker}, 'aborted'); fail(new Error('aborted')); }, { once: true })) };\n`,
  );
  return folder;
}

/** The jobs of the queue `queueName` that are not waiting to run: their ids, states and what they returned. */
export async function jobsOf(url: string, queueName: string): Promise<{ id: string | undefined; state: string; returnvalue: unknown }[]> {
  const parsed = new URL(url);
  const queue = new Queue(queueName, { connection: { host: parsed.hostname, port: Number(parsed.port), maxRetriesPerRequest: 1 } });
  try {
    const jobs = await queue.getJobs(['active', 'completed', 'failed']);
    return Promise.all(jobs.map(async (job) => ({ id: job.id, state: await job.getState(), returnvalue: job.returnvalue })));
  } finally {
    await queue.close();
  }
}
