/** A document's temperature or maxTokens beyond its model's limits is refused at load (MODEL-13), through the built binary, before any request reaches the provider. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, folderWith, startCli } from '../helpers/cli.js';
import { json, startServer, type LoopbackServer } from '../models/support/loopback.js';
import { openAIStream, openAIUsage } from '../models/support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const localize = JSON.parse(readFileSync('requests/translator/localize.json', 'utf8')) as Record<string, unknown>;
const translator = JSON.parse(readFileSync('requests/translator/translator.json', 'utf8')) as Record<string, unknown>;
const input = '{"text":"Pin files to your workspace."}';

/** The shipped translator example in a fresh folder, the entry's and the delegate's config as given. */
function translatorFolder(config: { entry?: Record<string, unknown>; delegate?: Record<string, unknown> }): string {
  return folderWith({
    'localize.json': config.entry ? { ...localize, config: config.entry } : localize,
    'translator.json': config.delegate ? { ...translator, config: config.delegate } : translator,
  });
}

/** Runs the built binary on a live provider whose server is the loopback one; the key is a placeholder. */
function runLive(folder: string, model: string, extra: string[] = []) {
  const url = server?.url as string;
  const env: Record<string, string> = model.startsWith('openai:')
    ? { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${url}/v1` }
    : { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: url };
  return exited(startCli([join(folder, 'localize.json'), '--model', model, '--input', input, ...extra], { env }).done, 'the run', 30_000);
}

describe('model limits at load (MODEL-13)', () => {
  it('refuses config.temperature 3 on openai:gpt-4.1 with exit 2 and the pointer; nothing reaches the server', async () => {
    server = await startServer([openAIStream(['{"calls":[],"output":{"fr":"a","de":"b"}}'])]);
    const folder = translatorFolder({ entry: { temperature: 3 } });
    const result = await runLive(folder, 'openai:gpt-4.1');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${join(folder, 'localize.json')}#/config/temperature: 3 is above openai:gpt-4.1's maximum temperature 2.`);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses config.maxTokens 200000 on anthropic:claude-sonnet-4-5 as invalid_request in --json, before any request', async () => {
    // Never asked: any request it got would fail the test below.
    server = await startServer([json(500, {})]);
    const folder = translatorFolder({ entry: { maxTokens: 200_000 } });
    const result = await runLive(folder, 'anthropic:claude-sonnet-4-5', ['--json']);
    expect(result.code).toBe(2);
    const reported = JSON.parse(result.stdout) as { ok: boolean; error: { code: string; problems: Array<{ pointer: string; message: string }> } };
    expect(reported.ok).toBe(false);
    expect(reported.error.code).toBe('invalid_request');
    expect(reported.error.problems).toEqual([
      {
        document: join(folder, 'localize.json'),
        pointer: '/config/maxTokens',
        message: "200000 is above anthropic:claude-sonnet-4-5's output limit of 64000 tokens.",
      },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('runs values within the limits as before', async () => {
    server = await startServer([openAIStream(['{"calls":[],"output":{"fr":"a","de":"b"}}'], openAIUsage(10, 5))]);
    const folder = translatorFolder({ entry: { temperature: 2, maxTokens: 32_768 } });
    const result = await runLive(folder, 'openai:gpt-4.1');
    expect(result.code).toBe(0);
    // A server at another base URL is sent `max_tokens` (OpenAI-compatible servers know no other).
    expect(server.requests[0]?.body).toMatchObject({ temperature: 2, max_tokens: 32_768 });
  });

  it("refuses a delegate naming its own model when it is loaded: the parent's model sees the error with the pointer, the child never asks", async () => {
    const calls = JSON.stringify({
      calls: [
        { _tool: 'translate', _instance: 'fr', text: '†input.text', _outputPath: '†state.translation' },
        { _tool: 'translate', _instance: 'de', text: '†input.text', _outputPath: '†state.translation' },
      ],
      output: null,
    });
    server = await startServer([openAIStream([calls]), openAIStream(['{"calls":[],"output":{"fr":"-","de":"-"}}'])]);
    const folder = translatorFolder({ delegate: { model: 'openai:gpt-4.1', temperature: 3 } });
    const result = await runLive(folder, 'openai:gpt-4.1');
    expect(result.code).toBe(0);
    // The parent's two steps, and no request of either child.
    expect(server.requests).toHaveLength(2);
    const seen = JSON.stringify(server.requests[1]?.body.messages);
    expect(seen).toContain('invalid_request');
    expect(seen).toContain(`${join(folder, 'translator.json')}#/config/temperature: 3 is above openai:gpt-4.1's maximum temperature 2.`);
  });
});
