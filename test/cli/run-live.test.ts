import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, offlineEnv, readTrace, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { openAIStreamEvents, openAIUsage } from '../models/support/openai-wire.js';

/**
 * A loopback server speaking the OpenAI chat-completions wire format (SSE), playing the
 * translator example: it decides each answer from the prompt, as a model would.
 */
function answerFor(prompt: string): unknown {
  if (prompt.includes('professional translator')) {
    return {
      calls: [],
      output: prompt.includes('French') ? 'Épinglez des fichiers dans votre espace de travail.' : 'Heften Sie Dateien in Ihrem Arbeitsbereich an.',
    };
  }
  if (prompt.includes('Heften Sie') && prompt.includes('Épinglez')) {
    return { calls: [], output: { fr: 'Épinglez des fichiers dans votre espace de travail.', de: 'Heften Sie Dateien in Ihrem Arbeitsbereich an.' } };
  }
  return {
    calls: [
      { _tool: 'translate', _instance: 'fr', text: '†input.text', _outputPath: '†state.translation' },
      { _tool: 'translate', _instance: 'de', text: '†input.text', _outputPath: '†state.translation' },
    ],
    output: null,
  };
}

async function bodyOf(request: IncomingMessage): Promise<{ model: string; messages: Array<{ content: string }>; response_format?: unknown; stream?: boolean }> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text);
}

describe('a live OpenAI-compatible server, end to end', () => {
  let server: Server;
  let baseUrl = '';
  const received: Array<{ model: string }> = [];

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      const body = await bodyOf(request);
      received.push(body);
      const prompt = body.messages.map((message) => message.content).join('\n');
      const text = JSON.stringify(answerFor(prompt));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // Stream the answer in small pieces, as a real provider does.
      const pieces = text.match(/[\s\S]{1,24}/g) ?? [];
      for (const event of openAIStreamEvents(pieces, openAIUsage(300, 40))) response.write(event);
      response.end();
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const address = server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
  });

  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('runs on the provider, records a cassette, and replays it offline to the same output', async () => {
    const folder = tempDir();
    const cassette = join(folder, 'recorded.cassette.json');
    const trace = join(folder, 'live.jsonl');
    const input = '{"text":"Pin files to your workspace."}';
    const live: CliResult = await runCli([
      'requests/translator/localize.json',
      '--model',
      'openai:gpt-4.1-mini',
      '--base-url',
      baseUrl,
      '--record',
      cassette,
      '--input',
      input,
      '--trace',
      trace,
      '--json',
    ]);
    expect(live.code).toBe(0);
    const liveResult = JSON.parse(live.stdout);
    expect(liveResult.output).toEqual({ fr: 'Épinglez des fichiers dans votre espace de travail.', de: 'Heften Sie Dateien in Ihrem Arbeitsbereich an.' });
    // Structured output was asked for, with the composed Solution schema.
    expect(received[0]).toMatchObject({ response_format: { type: 'json_schema' }, stream: true });
    // Usage and cost reach the trace: 4 model calls of 300 input tokens each, priced by the registry.
    const responses = readTrace(trace).filter((event) => event.event === 'model.response');
    expect(responses.map((event) => `${event.depth}:${String(event.step)}`).sort()).toEqual(['0:0', '0:1', '1:0', '1:0']);
    for (const event of responses) expect(event).toMatchObject({ usage: { inputTokens: 300, outputTokens: 40 }, costUsd: expect.any(Number) });
    expect(liveResult.usage.inputTokens).toBe(1200);
    expect(existsSync(cassette)).toBe(true);

    const replayed = await runCli(['requests/translator/localize.json', '--model', `replay:${cassette}`, '--input', input, '--json']);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout).output).toEqual(liveResult.output);
    const entries = JSON.parse(readFileSync(cassette, 'utf8')).entries as Array<{ match: { request: string } }>;
    expect(entries.map((entry) => entry.match.request).sort()).toEqual(['localize', 'localize', 'translator', 'translator']);
  });

  it('chooses OpenAI when OPENAI_API_KEY is set and no --model is given', async () => {
    const child = spawn(process.execPath, [BIN, 'requests/translator/localize.json', '--input', '{"text":"Pin files."}', '--json'], {
      env: offlineEnv({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: baseUrl }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const before = received.length;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((done) => child.on('close', done));
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, output: { fr: expect.any(String) } });
    // The answers came from the server, not from the cassette beside the request: four model
    // calls (the parent's two steps and one per instance), each for the OpenAI default model.
    expect(stderr).not.toContain('replaying');
    const calls = received.slice(before);
    expect(calls).toHaveLength(4);
    for (const body of calls) expect(body.model).toBe('gpt-4.1-mini');
  });
});
