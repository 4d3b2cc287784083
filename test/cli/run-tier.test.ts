/** The command line's tier options (CLI-18, DEL-28): --tier, DELEGATE_MODELS from the command's own environment, and a live planner and worker against a loopback server. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/run.js';
import { tierModels } from '../../src/cli/run-setup.js';
import { exited, readTrace, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { type Handler, sse, stall, startServer, type LoopbackServer } from '../models/support/loopback.js';
import { openAIStreamEvents, openAIUsage } from '../models/support/openai-wire.js';
import { fakePipe } from './fake-terminal.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(argv: string[], env: Record<string, string>, cwd: string) {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await main(argv, { stdout, stderr, env, cwd });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

const plannerAnswer = {
  calls: [{ _tool: 'delegate', tier: 'fast', task: 'Rename x to y.', context: { mode: 'minimal' }, _outputPath: '†state.renamed' }],
  output: null,
};

/** A folder with a planner on `model`, and a cassette beside it answering the planner and its worker. */
function plannerFolder(model = 'openai:gpt-5'): { folder: string; request: string } {
  const folder = tempDir();
  const request = join(folder, 'planner.json');
  writeFileSync(
    request,
    JSON.stringify({ meta: { name: 'planner' }, config: { model }, context: [{ type: 'system', text: 'Plan.' }], schema: { type: 'string' } }),
  );
  const entries = [
    { match: { request: 'planner', step: 0 }, solution: plannerAnswer },
    { match: { request: 'anonymous:delegate' }, solution: { calls: [], output: 'renamed' } },
    { match: { request: 'planner', step: 1 }, solution: { calls: [], output: 'done' } },
  ];
  writeFileSync(join(folder, 'planner.cassette.json'), JSON.stringify({ version: 1, entries }));
  return { folder, request };
}

describe('--tier (CLI-18)', () => {
  it('reads <tier>=<provider>:<model>, a later one for a tier winning', () => {
    expect(tierModels(['fast=openai:a', 'deep=anthropic:b', 'fast=openai:c'])).toEqual({ fast: 'openai:c', deep: 'anthropic:b' });
  });

  it.each([
    ['tiny=openai:x', /tier of fast, balanced, deep, got "tiny=openai:x"/],
    ['fast', /tier of fast, balanced, deep, got "fast"/],
    ['fast=gpt-4.1-nano', /--tier fast= expects a model spec <provider>:<model>, got "gpt-4.1-nano"/],
    ['fast=openai:', /expects a model spec/],
  ])('refuses %s', (given, message) => {
    expect(() => tierModels([given])).toThrow(message);
  });

  it('refuses a model of an unknown provider before anything runs (exit 2)', async () => {
    const { folder, request } = plannerFolder();
    const result = await run([request, '--tier', 'fast=mystery:tiny'], {}, folder);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--tier fast=mystery:tiny: the provider "mystery:" is unknown');
  });
});

describe('DELEGATE_MODELS of the command environment (DEL-28)', () => {
  it('merges the file it names on the shipped catalog, for the tier choice', async () => {
    const { folder, request } = plannerFolder();
    writeFileSync(join(folder, 'models.json'), JSON.stringify({ tiers: { fast: ['openai:gpt-5-nano'] } }));
    const trace = join(folder, 'trace.jsonl');
    const result = await run([request, '--trace', trace, '--json'], { DELEGATE_MODELS: 'models.json' }, folder);
    expect(result.status, result.stderr).toBe(0);
    expect(readTrace(trace).find((event) => event.event === 'delegate.started')).toMatchObject({ tier: 'fast', model: 'openai:gpt-5-nano' });
  });

  it('is bad usage naming the file and pointer when the file is invalid', async () => {
    const { folder, request } = plannerFolder();
    writeFileSync(join(folder, 'models.json'), JSON.stringify({ models: { 'openai:x': { tier: 'huge' } } }));
    const result = await run([request], { DELEGATE_MODELS: 'models.json' }, folder);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${join(folder, 'models.json')}#/models/openai:x/tier`);
  });
});

describe('a live planner and worker (DEL-28)', () => {
  it('runs the worker on the --tier model of the live provider, with the tier choice made fresh', async () => {
    const answer = (solution: unknown, model: string) => sse(openAIStreamEvents([JSON.stringify(solution)], openAIUsage(100, 10), model));
    server = await startServer([
      answer(plannerAnswer, 'gpt-5'),
      answer({ calls: [], output: 'renamed' }, 'gpt-4.1-nano'),
      answer({ calls: [], output: 'done' }, 'gpt-5'),
    ]);
    const { folder, request } = plannerFolder();
    const trace = join(folder, 'trace.jsonl');
    const argv = [request, '--model', 'openai:gpt-5', '--base-url', server.url, '--tier', 'fast=openai:gpt-4.1-nano', '--trace', trace, '--json'];
    const result = await run(argv, { OPENAI_API_KEY: 'sk-test' }, folder);
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'done' });
    expect(server.requests.map((received) => received.body.model)).toEqual(['gpt-5', 'gpt-4.1-nano', 'gpt-5']);
    const events = readTrace(trace);
    expect(events.find((event) => event.event === 'delegate.completed')).toMatchObject({ usage: { model: 'openai:gpt-4.1-nano', inputTokens: 100 } });
    // The live planner's Solution schema offered the tool; the worker's did not.
    expect(JSON.stringify(server.requests[0]?.body)).toContain('delegate');
    expect(JSON.stringify(server.requests[1]?.body.response_format)).not.toContain('"delegate"');
  });

  /** The planner's answers by what it has seen (retries and order do not matter); the worker's model stalls. */
  const stalledWorker: Handler = (request, response) => {
    if (request.body.model === 'gpt-4.1-nano') return stall()(request, response);
    const seenOutcome = JSON.stringify(request.body.messages).includes('worker_error');
    const solution = seenOutcome ? { calls: [], output: 'done' } : plannerAnswer;
    return sse(openAIStreamEvents([JSON.stringify(solution)], openAIUsage(100, 10), 'gpt-5'))(request, response);
  };

  it("answers worker_error when the worker's server never answers, and the planner goes on (DEL-26, MODEL-2)", async () => {
    server = await startServer([stalledWorker]);
    const { folder, request } = plannerFolder();
    const trace = join(folder, 'trace.jsonl');
    const argv = [request, '--model', 'openai:gpt-5', '--base-url', server.url, '--tier', 'fast=openai:gpt-4.1-nano'];
    const result = await run([...argv, '--model-timeout', '1', '--model-retries', '0', '--trace', trace, '--json'], { OPENAI_API_KEY: 'sk-test' }, folder);
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'done' });
    const events = readTrace(trace);
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ failureMode: 'worker_error' });
    const completed = events.find((event) => event.event === 'call.completed' && event.tool === 'delegate');
    expect(completed?.result).toEqual({
      success: false,
      output: null,
      error: 'worker_error: model_error: The OpenAI request failed: No complete answer within the model timeout of 1 s.',
    });
    const worker = server.requests.filter((received) => received.body.model === 'gpt-4.1-nano');
    expect(worker).toHaveLength(1);
    // The worker's connection was dropped when its attempt timed out (a hang here is a leaked connection).
    await worker[0]?.closed;
  });

  it('ends every run cancelled on SIGTERM while the worker waits on its server, and drops the connection (CLI-13)', async () => {
    server = await startServer([stalledWorker]);
    const { folder, request } = plannerFolder();
    const trace = join(folder, 'trace.jsonl');
    const { child, done } = startCli([request, '--model', 'openai:gpt-5', '--base-url', server.url, '--tier', 'fast=openai:gpt-4.1-nano', '--trace', trace], {
      cwd: folder,
      env: { OPENAI_API_KEY: 'sk-test' },
    });
    await waitFor(() => server?.requests.some((received) => received.body.model === 'gpt-4.1-nano') === true);
    child.kill('SIGTERM');
    const result = await exited(done, 'SIGTERM during a delegation');
    expect(result.code, result.stderr).toBe(143);
    const events = readTrace(trace);
    const runs = new Set(events.map((event) => event.run));
    expect(runs.size).toBe(2);
    for (const run of runs) expect(events.filter((event) => event.run === run).at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user' });
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ failureMode: 'cancelled_by_user' });
    await server.requests.find((received) => received.body.model === 'gpt-4.1-nano')?.closed;
  });
});
