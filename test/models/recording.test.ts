/** Tests of recording: a cassette written after every answer, and replaying it gives the same solutions. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/protocol/model.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { RecordingModel } from '../../src/models/recording.js';
import { ReplayModel } from '../../src/models/replay.js';
import { startServer, type LoopbackServer } from './support/loopback.js';
import { openAIStream, openAIUsage } from './support/openai-wire.js';
import { solutionSchema } from './support/solution-schema.js';

let dir: string;
let server: LoopbackServer | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recording-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

function request(requestName: string, step: number): ModelRequest {
  return { requestName, step, messages: [{ role: 'user', content: `${requestName} ${step}` }], schema: solutionSchema, config: {} };
}

describe('RecordingModel', () => {
  it('writes the cassette after each answer and replaying it gives the same solutions', async () => {
    const answers = [
      { calls: [{ _tool: 'synth', sound: 'piano', _outputPath: null }], output: null },
      { calls: [], output: 'done' },
    ];
    server = await startServer([
      openAIStream([JSON.stringify(answers[0])], openAIUsage(100, 20, 10)),
      openAIStream(['{"calls": [', '], "output": "done"}'], openAIUsage(50, 5)),
      openAIStream(['not json at all']),
    ]);
    const path = join(dir, 'nested', 'run.cassette.json');
    const live = new RecordingModel(new OpenAIModel({ model: 'gpt-4.1-mini', env: { OPENAI_API_KEY: 'k' }, baseUrl: server.url }), path);
    expect(live.id).toBe('openai:gpt-4.1-mini');

    const first = await live.generate(request('composer', 0));
    const afterFirst = JSON.parse(await readFile(path, 'utf8')) as { version: number; entries: unknown[] };
    expect(afterFirst.version).toBe(1);
    expect(afterFirst.entries).toEqual([
      {
        match: { request: 'composer', step: 0 },
        solution: { calls: [{ _tool: 'synth', sound: 'piano' }], output: null },
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 10, cacheWriteTokens: 0 },
        model: 'openai:gpt-4.1-mini-2025-04-14',
      },
    ]);
    const second = await live.generate(request('composer', 1));
    const third = await live.generate(request('composer', 1));
    expect(third.solution).toBeUndefined();

    const replay = await ReplayModel.fromFile(path);
    const replayed = [
      await replay.generate(request('composer', 0)),
      await replay.generate(request('composer', 1)),
      await replay.generate(request('composer', 1)),
    ];
    expect(replayed.map((response) => response.solution)).toEqual([first.solution, second.solution, third.solution]);
    expect(replayed[2]!.text).toBe('not json at all');
    expect(replayed.map((response) => response.usage)).toEqual([first.usage, second.usage, third.usage]);
    expect(replay.unused()).toEqual([]);
  });

  it('records nothing for a failed call', async () => {
    const path = join(dir, 'empty.cassette.json');
    const failing = new RecordingModel({ id: 'x:y', generate: () => Promise.reject(new Error('down')) }, path);
    await expect(failing.generate(request('r', 0))).rejects.toThrow('down');
    expect(failing.recorder.entries).toEqual([]);
    await expect(readFile(path, 'utf8')).rejects.toThrow();
  });
});
