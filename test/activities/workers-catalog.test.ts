/** A `workers` message whose `from` is a delegate-serve catalog (WRK-2): a team served over HTTP becomes tools, under the URL rules. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { RequestError } from '../../src/protocol/errors.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { memorySink, Tracer } from '../../src/protocol/trace/trace.js';
import { createRequestHandler } from '../../src/server/handler.js';
import { serve, type RunningServer } from '../../src/server/node-listener.js';
import { folderWith } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const served = folderWith({
  'evaluator.json': {
    meta: { name: 'evaluator', description: 'Scores one pitch deck.' },
    context: [{ type: 'system', text: 'SERVED-EVALUATOR' }],
    schema: { type: 'object', properties: { score: { type: 'number' } }, required: ['score'] },
  },
  'team/reviewer.json': { meta: { name: 'reviewer' }, context: [{ type: 'system', text: 'SERVED-REVIEWER' }], schema: { type: 'string' } },
});

let server: RunningServer;
let answered: string;
/** The access-log lines of the server: what it was asked. */
const asked: string[] = [];
beforeAll(async () => {
  const handler = createRequestHandler({ root: served, log: (line) => asked.push(line) });
  server = await serve(handler, { port: 0, host: '127.0.0.1' });
  answered = `${server.url}/`;
});
afterAll(async () => {
  await server.close();
});

function orchestratorRoot(from: string, allow: unknown = ['evaluator']) {
  return folderWith({
    'orchestrator.json': { meta: { name: 'orchestrator' }, context: [{ type: 'workers', from, allow }], schema: { type: 'string' } },
  });
}

async function run(root: string, answers: ((request: ModelRequest) => unknown)[], allowHosts: string[] = ['127.0.0.1']) {
  const runtime = createRuntime({ root, allowHosts });
  const model = stepModel(...answers);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, tracer: new Tracer([sink]) });
  return { result, model, events: sink.events };
}

/** A run refused before its first model call: its model and the problems its invalid_request names (WRK-5). */
async function refused(root: string, allowHosts?: string[]) {
  const { result, model } = await run(root, [() => ({ calls: [], output: 'x' })], allowHosts);
  expect(result.ok).toBe(false);
  const error = result.ok ? undefined : result.error;
  expect(error).toBeInstanceOf(RequestError);
  return { model, problems: (error as RequestError).problems };
}

describe('workers from a delegate-serve catalog (WRK-2)', () => {
  it('offers the allowed served workers as tools and delegates to their URLs', async () => {
    const root = orchestratorRoot(answered);
    const { result, model, events } = await run(root, [
      (request) =>
        request.requestName === 'orchestrator'
          ? { calls: [{ _tool: 'evaluator', input: 'deck A', _outputPath: '†state.verdict' }], output: null }
          : { calls: [], output: { score: 7 } },
      (request) => (request.requestName === 'orchestrator' ? { calls: [], output: 'scored' } : { calls: [], output: { score: 7 } }),
    ]);
    expect(result.ok).toBe(true);
    const first = model.requests.find((request) => request.requestName === 'orchestrator');
    expect(JSON.stringify(first?.schema)).toContain('Scores one pitch deck.');
    expect(JSON.stringify(first?.schema)).not.toContain('reviewer');
    const child = model.requests.find((request) => request.requestName === 'evaluator');
    expect(JSON.stringify(child?.messages)).toContain('SERVED-EVALUATOR');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ delegate: `${server.url}/evaluator.json`, name: 'evaluator' });
  });

  it('fetches only the catalog and the workers it allows, never a Request it does not offer', async () => {
    const root = orchestratorRoot(answered, ['evaluator']);
    asked.length = 0;
    await run(root, [() => ({ calls: [], output: 'nothing to do' })]);
    expect(asked.some((line) => line.includes('/evaluator.json'))).toBe(true);
    expect(asked.filter((line) => line.includes('/team/reviewer.json'))).toEqual([]);
  });

  it('finds workers in the catalog\'s subfolders by name, "*" offering all', async () => {
    const root = orchestratorRoot(answered, '*');
    const { model } = await run(root, [() => ({ calls: [], output: 'nothing to do' })]);
    const schema = JSON.stringify(model.requests[0]?.schema);
    expect(schema).toContain('Scores one pitch deck.');
    expect(schema).toContain('SERVED-REVIEWER');
  });

  it('refuses a catalog on a host not allowed, before any model call, naming the pointer and --allow-host', async () => {
    const root = orchestratorRoot(answered);
    const { model, problems } = await refused(root, []);
    expect(model.requests).toHaveLength(0);
    const problem = problems[0];
    expect(problem?.pointer).toBe('/context/0/from');
    expect(problem?.message).toMatch(/not on the allow-list.*--allow-host/);
  });

  it('names an allowed worker the catalog does not list', async () => {
    const root = orchestratorRoot(answered, ['evaluator', 'missing']);
    const { problems } = await refused(root);
    expect(problems).toEqual([expect.objectContaining({ pointer: '/context/0/allow/1', message: expect.stringContaining('"missing"') })]);
  });

  it('refuses an answer that is not a catalog (a served Request)', async () => {
    const root = orchestratorRoot(`${server.url}/evaluator.json`);
    const { problems } = await refused(root);
    expect(problems[0]).toMatchObject({
      pointer: '/context/0/from',
      message: expect.stringContaining('is not a delegate-serve catalog'),
    });
  });
});
