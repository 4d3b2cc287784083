/** The `workers` message (spec/workers.md WRK-1 to WRK-6): a folder of Requests offered as tools, by an allow-list. */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith, tempDir } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const LONG_SYSTEM = `You review pitch decks. ${'x'.repeat(300)}`;

/** A team folder: an evaluator with a description and an input schema, two reviewers, and a secret worker. */
const team = {
  'team/evaluator.json': {
    meta: { name: 'evaluator', description: 'Scores one pitch deck.' },
    config: { attachments: { maxCount: 2 } },
    context: [
      { type: 'system', text: 'You evaluate.' },
      { type: 'input', schema: { type: 'object', properties: { deck: { type: 'string' } }, required: ['deck'] } },
    ],
    schema: { type: 'object', properties: { score: { type: 'number' } }, required: ['score'] },
  },
  'team/review-a.json': { context: [{ type: 'system', text: LONG_SYSTEM }], schema: { type: 'string' } },
  'team/review-b.json': { meta: { name: 'review-b' }, context: [{ type: 'system', text: 'B.' }], schema: { type: 'string' } },
  'team/secret.json': { context: [{ type: 'system', text: 'SECRET-WORKER' }], schema: { type: 'string' } },
};

/** An orchestrator document with the given workers message (and other context before it). */
function orchestrator(workers: object, before: object[] = []) {
  return {
    meta: { name: 'orchestrator' },
    context: [{ type: 'user', text: 'CALLER-HISTORY' }, ...before, { type: 'workers', ...workers }],
    schema: { type: 'string' },
  };
}

/** The tools a model request offers, by name, from its Solution schema. */
function offered(request: ModelRequest): Record<string, Record<string, unknown>> {
  const tools: Record<string, Record<string, unknown>> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      const properties = record.properties as Record<string, { const?: unknown }> | undefined;
      const name = properties?._tool?.const;
      if (typeof name === 'string') tools[name] = record;
      Object.values(record).forEach(visit);
    }
  };
  visit(request.schema);
  return tools;
}

async function run(files: Record<string, unknown>, answers: ((request: ModelRequest) => unknown)[]) {
  const root = folderWith(files);
  const runtime = createRuntime({ root });
  const model = stepModel(...answers);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, tracer: new Tracer([sink]) });
  return { result, model, events: sink.events, root };
}

const done = () => ({ calls: [], output: 'done' });

describe('the workers message (WRK-1 to WRK-6)', () => {
  it('offers exactly the allowed workers, by name and glob, with their descriptions and parameters', async () => {
    const { result, model } = await run({ ...team, 'orchestrator.json': orchestrator({ from: './team/', allow: ['evaluator', 'review-*'] }) }, [done]);
    expect(result.ok).toBe(true);
    const tools = offered(model.requests[0] as ModelRequest);
    expect(
      Object.keys(tools)
        .filter((name) => !name.startsWith('_'))
        .sort(),
    ).toEqual(['evaluator', 'review-a', 'review-b', 'worker_call']);
    expect(tools.evaluator?.description).toBe('Scores one pitch deck.');
    expect(tools['review-a']?.description).toBe(LONG_SYSTEM.slice(0, 200));
    const evaluator = tools.evaluator?.properties as Record<string, unknown>;
    expect(Object.keys(evaluator)).toEqual(expect.arrayContaining(['deck', 'attachments']));
    const reviewer = tools['review-a']?.properties as Record<string, unknown>;
    expect(reviewer).toHaveProperty('input');
    expect(reviewer).not.toHaveProperty('attachments');
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain('SECRET-WORKER');
  });

  it('offers every worker of the folder with "*"', async () => {
    const { model } = await run({ ...team, 'orchestrator.json': orchestrator({ from: 'team', allow: '*' }) }, [done]);
    expect(Object.keys(offered(model.requests[0] as ModelRequest)).sort()).toEqual(['evaluator', 'review-a', 'review-b', 'secret', 'worker_call']);
  });

  it('reads a folder of 1,000 workers, offers those its allow list names or globs, and delegates to the last of them', async () => {
    const many: Record<string, unknown> = {};
    for (let index = 0; index < 1_000; index++) {
      const name = `worker-${String(index).padStart(4, '0')}`;
      many[`crowd/file-${index}.json`] = {
        meta: { name, description: `Worker ${index}.` },
        context: [{ type: 'system', text: name }],
        schema: { type: 'string' },
      };
    }
    const last = (request: ModelRequest) =>
      request.requestName === 'orchestrator'
        ? { calls: [{ _tool: 'worker-0999', input: 'go', _outputPath: '†output' }], output: null }
        : { calls: [], output: `answered by ${request.requestName}` };
    // Names come from meta.name, not the file names: every file is read to find them.
    const one = await run({ ...many, 'orchestrator.json': orchestrator({ from: 'crowd', allow: ['worker-0999'] }) }, [last, done]);
    expect(Object.keys(offered(one.model.requests[0] as ModelRequest))).toEqual(['worker-0999', 'worker_call']);
    expect(one.result.ok && one.result.output).toBe('answered by worker-0999');
    const hundred = await run({ ...many, 'orchestrator.json': orchestrator({ from: 'crowd', allow: ['worker-09*'] }) }, [last, done]);
    const names = Object.keys(offered(hundred.model.requests[0] as ModelRequest))
      .filter((name) => name !== 'worker_call')
      .sort();
    expect(names).toEqual(Array.from({ length: 100 }, (_, index) => `worker-09${String(index).padStart(2, '0')}`));
    expect(hundred.result.ok && hundred.result.output).toBe('answered by worker-0999');
  });

  it('delegates a call to its worker, which sees exactly its input and none of the caller’s history', async () => {
    const { result, model } = await run({ ...team, 'orchestrator.json': orchestrator({ from: './team/', allow: ['review-b'] }) }, [
      (request) =>
        request.requestName === 'orchestrator'
          ? { calls: [{ _tool: 'review-b', input: 'WORKER-INPUT', _outputPath: '†state.review' }], output: null }
          : { calls: [], output: 'REVIEWED' },
      (request) => ({ calls: [], output: JSON.stringify(request.messages).includes('REVIEWED') ? 'saw review' : 'no review' }),
    ]);
    expect(result.ok && result.output).toBe('saw review');
    const child = model.requests.find((request) => request.requestName === 'review-b');
    expect(JSON.stringify(child?.messages)).toContain('WORKER-INPUT');
    expect(JSON.stringify(child?.messages)).not.toContain('CALLER-HISTORY');
  });

  it('cannot reach a worker that is not allowed: a call naming it is re-asked, never run', async () => {
    const { model } = await run({ ...team, 'orchestrator.json': orchestrator({ from: './team/', allow: ['review-b'] }) }, [
      () => ({ calls: [{ _tool: 'secret', input: 'x' }], output: null }),
      done,
    ]);
    expect(model.requests.some((request) => request.requestName === 'secret')).toBe(false);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('does not match the Solution schema');
    expect(offered(model.requests[0] as ModelRequest)).not.toHaveProperty('secret');
  });

  it('refuses, before any model call, a worker whose name collides with a tool, naming both places', async () => {
    const files = {
      ...team,
      'orchestrator.json': orchestrator({ from: './team/', allow: ['evaluator'] }, [
        { type: 'tool', tool: { evaluator: { properties: { q: { type: 'string' } } } } },
      ]),
    };
    const { result, model } = await run(files, [done]);
    expect(model.requests).toHaveLength(0);
    expect(result.ok).toBe(false);
    const error = !result.ok ? result.error : undefined;
    expect(error?.code).toBe('invalid_request');
    expect(error?.message).toContain('/context/2');
    expect(error?.message).toContain('/context/1/tool/evaluator');
    expect(error?.message).toContain('orchestrator.json');
  });

  it('refuses a worker named like a reserved built-in tool, and two workers messages offering one name', async () => {
    const reserved = await run(
      {
        'team/delegate.json': { context: [{ type: 'system', text: 'D' }], schema: { type: 'string' } },
        'orchestrator.json': orchestrator({ from: 'team', allow: '*' }),
      },
      [done],
    );
    expect(!reserved.result.ok && reserved.result.error.message).toMatch(/"delegate".*reserved/);
    const twice = await run(
      { ...team, 'orchestrator.json': orchestrator({ from: 'team', allow: ['evaluator'] }, [{ type: 'workers', from: 'team', allow: ['evaluator'] }]) },
      [done],
    );
    expect(!twice.result.ok && twice.result.error.message).toMatch(/\/context\/2.*\/context\/1|\/context\/1.*\/context\/2/s);
  });

  it('refuses a from outside the root, through a symbolic link or missing, and an allowed name no worker has', async () => {
    const outside = await run({ ...team, 'orchestrator.json': orchestrator({ from: '../', allow: '*' }) }, [done]);
    expect(!outside.result.ok && outside.result.error.message).toContain('/context/1/from');

    const elsewhere = tempDir('workers-elsewhere-');
    const root = folderWith({ ...team, 'orchestrator.json': orchestrator({ from: './linked', allow: '*' }) });
    symlinkSync(elsewhere, join(root, 'linked'));
    const runtime = createRuntime({ root });
    const linked = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model: stepModel(done) });
    expect(!linked.ok && linked.error.message).toContain('symbolic link');

    const missing = await run({ ...team, 'orchestrator.json': orchestrator({ from: 'team', allow: ['evaluator', 'judge'] }) }, [done]);
    expect(!missing.result.ok && missing.result.error.message).toMatch(/\/context\/1\/allow\/1.*"judge"/);
  });

  it('refuses a bad workers message on load: allow neither "*" nor a list of names', async () => {
    const root = folderWith({ 'orchestrator.json': orchestrator({ from: 'team', allow: 'evaluator' }) });
    await expect(createRuntime({ root }).load(join(root, 'orchestrator.json'))).rejects.toThrow(/\/context\/1/);
  });
});
