/** The command line's model options against loopback servers, in process: --model-timeout, DELEGATE_MODEL_TIMEOUT, --model-retries, the default Anthropic model. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/run.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { BIN, offlineEnv, readTrace, tempDir } from '../helpers/cli.js';
import { anthropicStream, anthropicStreamEvents } from '../models/support/anthropic-wire.js';
import { requestsLeft, sse, stall, startServer, type LoopbackServer } from '../models/support/loopback.js';
import { openAIStreamEvents } from '../models/support/openai-wire.js';
import { fakePipe } from './fake-terminal.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A folder with a one-step Request. */
function requestFile(): { folder: string; request: string } {
  const folder = tempDir();
  const request = join(folder, 'ask.json');
  writeFileSync(request, JSON.stringify({ meta: { name: 'ask' }, context: [{ type: 'system', text: 'Say hi.' }], schema: { type: 'string' } }));
  return { folder, request };
}

async function run(argv: string[], env: Record<string, string>, cwd: string) {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await main(argv, { stdout, stderr, env, cwd });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

describe('delegate-run model options', () => {
  it('times out each attempt after --model-timeout, retries --model-retries times, traces and shows each retry', async () => {
    server = await startServer([stall()]);
    const { folder, request } = requestFile();
    const trace = join(folder, 'trace.jsonl');
    const argv = [request, '--model', 'openai:gpt-4.1-mini', '--base-url', server.url, '--model-timeout', '0.2', '--model-retries', '1', '--trace', trace];
    const result = await run(argv, {}, folder);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/model_error: The OpenAI request failed after 2 attempts: No complete answer within the model timeout of 0\.2 s/);
    expect(result.stderr).toMatch(/↻ step 0: attempt 1 failed, retrying in \d+ms: No complete answer within the model timeout of 0\.2 s/);
    expect(await requestsLeft(server)).toBeLessThanOrEqual(2);
    const retries = readTrace(trace).filter((event) => event.event === 'model.retry');
    expect(retries).toEqual([expect.objectContaining({ step: 0, attempt: 1, reason: expect.stringContaining('0.2 s'), waitMs: expect.any(Number) })]);
  });

  it('reads the timeout from DELEGATE_MODEL_TIMEOUT when --model-timeout is absent', async () => {
    server = await startServer([stall()]);
    const { folder, request } = requestFile();
    const argv = [request, '--model', 'openai:gpt-4.1-mini', '--base-url', server.url, '--model-retries', '0', '--json'];
    const result = await run(argv, { DELEGATE_MODEL_TIMEOUT: '0.15' }, folder);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: false,
      error: { code: 'model_error', message: 'The OpenAI request failed: No complete answer within the model timeout of 0.15 s.' },
    });
    expect(await requestsLeft(server)).toBeLessThanOrEqual(1);
  });

  it.each([
    [['--model-timeout', 'soon'], {}, '--model-timeout expects a positive number of seconds, got "soon".'],
    [['--model-timeout', '0'], {}, '--model-timeout expects a positive number of seconds, got "0".'],
    [['--model-retries', '1.5'], {}, '--model-retries expects a whole number of at least 0, got "1.5".'],
    [[], { DELEGATE_MODEL_TIMEOUT: '2m' }, 'DELEGATE_MODEL_TIMEOUT expects a positive number of seconds, got "2m".'],
  ])('refuses %j %j as bad usage', async (extra, env, message) => {
    const { folder, request } = requestFile();
    const result = await run([request, '--model', 'openai:gpt-4.1-mini', '--base-url', 'http://127.0.0.1:9', ...extra], env, folder);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it("uses the balanced tier's Anthropic model of models.json when only ANTHROPIC_API_KEY is set", async () => {
    server = await startServer([anthropicStream(['{"calls":[],"output":"hi"}'])]);
    const { folder, request } = requestFile();
    const result = await run([request, '--quiet'], { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url }, folder);
    expect(result.status).toBe(0);
    const balanced = ModelCatalog.load({ env: {} }).modelForTier('balanced', { provider: 'anthropic' });
    expect(`anthropic:${server.requests[0]!.body.model}`).toBe(balanced);
  });

  it.each([
    {
      provider: 'openai',
      events: openAIStreamEvents(['{"calls":[],']),
      garbage: 'data: {"choices": [\n\n',
      env: {},
      model: (url: string) => ['--model', 'openai:gpt-4.1-mini', '--base-url', url],
    },
    {
      provider: 'anthropic',
      events: anthropicStreamEvents(['{"calls":[],']),
      garbage: 'event: content_block_delta\ndata: {"delta": {\n\n',
      env: { ANTHROPIC_API_KEY: 'k' },
      model: () => ['--model', 'anthropic:claude-haiku-4-5'],
    },
  ])('prints nothing but the failure under --quiet when the $provider SDK meets a garbled stream', async ({ events, garbage, env, model }) => {
    server = await startServer([sse([...events.slice(0, 2), garbage])]);
    const { folder, request } = requestFile();
    const child = spawn(process.execPath, [BIN, request, ...model(server.url), '--quiet'], {
      cwd: folder,
      env: { ...offlineEnv(), ...env, ANTHROPIC_BASE_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((done) => child.on('close', done));
    expect(status).toBe(1);
    expect(stderr).toMatch(/^delegate-run: model_error: The \w+ request failed: The server sent data that is not JSON: [^\n]*\n$/);
  });
});
