/** Tests of the replay model: matching, consumption, repeat, errors, onCall, abort, and cassette files. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelError, UsageError } from '../../src/protocol/errors.js';
import type { Call } from '../../src/protocol/types.js';
import { ModelConfigError } from '../../src/models/config-error.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { ReplayModel } from '../../src/models/replay.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';

function request(requestName: string, step: number, prompt = 'hello', extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    requestName,
    step,
    messages: [
      { role: 'system', content: 'You are a composer.' },
      { role: 'user', content: prompt },
    ],
    schema: { type: 'object' },
    config: {},
    ...extra,
  };
}

describe('ReplayModel', () => {
  it('answers with the first unused entry matching request, step and prompt', async () => {
    const model = new ReplayModel({
      version: 1,
      entries: [
        { match: { request: 'composer', step: 0, contains: 'ballad' }, solution: { calls: [], output: 'ballad' } },
        { match: { request: 'composer', step: 0 }, solution: { calls: [], output: 'any' }, usage: { inputTokens: 120, outputTokens: 40 } },
      ],
    });
    const first = await model.generate(request('composer', 0, 'write a ballad'));
    expect(first.solution).toEqual({ calls: [], output: 'ballad' });
    expect(first.text).toBe('{"calls":[],"output":"ballad"}');
    expect(first.model).toBe('replay:inline');
    expect(first.costUsd).toBe(0);
    expect(first.usage).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    const second = await model.generate(request('composer', 0, 'write a ballad'));
    expect(second.solution).toEqual({ calls: [], output: 'any' });
    expect(second.usage).toEqual({ inputTokens: 120, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(model.unused()).toEqual([]);
    expect(model.requests.map((r) => r.requestName)).toEqual(['composer', 'composer']);
  });

  it('reuses repeat entries and reports entries never used', async () => {
    const model = new ReplayModel([
      { match: { step: 1 }, solution: { calls: [], output: 1 } },
      { repeat: true, solution: { calls: [], output: 'again' } },
    ]);
    expect((await model.generate(request('a', 0))).solution).toEqual({ calls: [], output: 'again' });
    expect((await model.generate(request('b', 0))).solution).toEqual({ calls: [], output: 'again' });
    expect(model.unused()).toEqual([{ match: { step: 1 }, solution: { calls: [], output: 1 } }]);
  });

  it('fails with model_error naming the request, the step and the start of the prompt when nothing matches', async () => {
    const model = new ReplayModel([{ match: { request: 'other' }, solution: { calls: [], output: null } }]);
    const error = await model.generate(request('composer', 3, 'x'.repeat(300))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe('model_error');
    expect((error as ModelError).message).toContain('"composer"');
    expect((error as ModelError).message).toContain('step 3');
    expect((error as ModelError).message).toContain('You are a composer.');
    expect((error as ModelError).data.prompt).toHaveLength(200);
  });

  it('gives raw text entries as text, with a solution only when the text is JSON', async () => {
    const model = new ReplayModel([{ text: 'not json' }, { text: '{"calls": [], "output": 2}' }]);
    const bad = await model.generate(request('r', 0));
    expect(bad.text).toBe('not json');
    expect(bad.solution).toBeUndefined();
    const good = await model.generate(request('r', 0));
    expect(good.solution).toEqual({ calls: [], output: 2 });
  });

  it('calls onCall for each call before resolving', async () => {
    const calls: Array<[Call, number]> = [];
    const model = new ReplayModel([{ solution: { calls: [{ _tool: 'a' }, 'junk', { _tool: 'b', x: 1 }], output: null } }]);
    let resolved = false;
    const pending = model.generate(
      request('r', 0, 'p', {
        onCall: (call, index) => {
          expect(resolved).toBe(false);
          calls.push([call, index]);
        },
      }),
    );
    await pending.then(() => {
      resolved = true;
    });
    expect(calls).toEqual([
      [{ _tool: 'a' }, 0],
      [{ _tool: 'b', x: 1 }, 2],
    ]);
  });

  it('matches parallel children by their own request name and step, whatever the order', async () => {
    const model = new ReplayModel([
      { match: { request: 'child-a', step: 0 }, solution: { calls: [], output: 'a0' } },
      { match: { request: 'child-b', step: 0 }, solution: { calls: [], output: 'b0' } },
      { match: { request: 'child-a', step: 1 }, solution: { calls: [], output: 'a1' } },
    ]);
    const [b0, a0] = await Promise.all([model.generate(request('child-b', 0)), model.generate(request('child-a', 0))]);
    expect([b0.solution, a0.solution]).toEqual([
      { calls: [], output: 'b0' },
      { calls: [], output: 'a0' },
    ]);
    expect((await model.generate(request('child-a', 1))).solution).toEqual({ calls: [], output: 'a1' });
  });

  it('rejects with an AbortError when the signal is already aborted, and during a scripted delay', async () => {
    const model = new ReplayModel([{ repeat: true, delayMs: 10_000, solution: { calls: [], output: null } }]);
    const controller = new AbortController();
    controller.abort();
    await expect(model.generate(request('r', 0, 'p', { signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    const late = new AbortController();
    const started = Date.now();
    const pending = model.generate(request('r', 0, 'p', { signal: late.signal }));
    setTimeout(() => late.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('prices (CAS-14)', () => {
    const catalog = () =>
      new ModelCatalog(
        { models: { 'openai:gpt-4.1': { price: { input: 2, output: 8 } }, 'test:unpriced': {} } },
        { warn: (message) => warnings.push(message) },
      );
    let warnings: string[] = [];
    beforeEach(() => {
      warnings = [];
    });

    it('prices an answer as the model its entry names would have cost, and says which model it stands for', async () => {
      const model = new ReplayModel(
        [{ model: 'openai:gpt-4.1', solution: { calls: [], output: 1 }, usage: { inputTokens: 1000, outputTokens: 500 } }],
        'inline',
        {
          prices: catalog(),
        },
      );
      const answer = await model.generate(request('r', 0));
      expect(answer.model).toBe('replay:inline');
      expect(answer.replayOf).toBe('openai:gpt-4.1');
      expect(answer.costUsd).toBeCloseTo((1000 * 2 + 500 * 8) / 1_000_000, 12);
    });

    it('costs 0 when the entry names no model, and an unknown price stays unknown (null, warned once)', async () => {
      const model = new ReplayModel(
        [
          { solution: { calls: [], output: 1 }, usage: { inputTokens: 1000 } },
          { repeat: true, model: 'test:unpriced', solution: { calls: [], output: 2 }, usage: { inputTokens: 1000 } },
        ],
        'inline',
        { prices: catalog() },
      );
      const free = await model.generate(request('r', 0));
      expect([free.costUsd, 'replayOf' in free]).toEqual([0, false]);
      const unknown = await model.generate(request('r', 1));
      expect([unknown.costUsd, unknown.replayOf]).toEqual([null, 'test:unpriced']);
      await model.generate(request('r', 2));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('test:unpriced');
    });

    it('prices with the shipped models.json when given no catalog', async () => {
      const model = new ReplayModel([{ model: 'openai:gpt-4.1-mini', solution: { calls: [], output: 1 }, usage: { inputTokens: 1_000_000 } }]);
      const shipped = ModelCatalog.load({ env: {} }).costOf('openai:gpt-4.1-mini', {
        inputTokens: 1_000_000,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
      expect((await model.generate(request('r', 0))).costUsd).toBe(shipped);
      expect(shipped).toBeGreaterThan(0);
    });
  });

  it('rejects an invalid inline cassette with the JSON pointer of each problem', () => {
    expect(() => new ReplayModel({ version: 1, entries: [{ match: { step: -1 }, solution: {}, text: 'x' }] } as never)).toThrow(ModelConfigError);
    let thrown: unknown;
    try {
      new ReplayModel({ version: 1, entries: [{ match: { step: -1, stpe: 1 }, solution: {}, text: 'x' }] } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    const pointers = (thrown as ModelConfigError).problems.map((problem) => problem.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/entries/0/match/step', '/entries/0/match/stpe', '/entries/0']));
  });

  describe('files', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'replay-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('loads a cassette file and names the file in its id', async () => {
      const path = join(dir, 'ok.cassette.json');
      await writeFile(path, JSON.stringify({ version: 1, entries: [{ solution: { calls: [], output: 'ok' } }] }));
      const model = await ReplayModel.fromFile(path);
      expect(model.id).toBe(`replay:${path}`);
      expect((await model.generate(request('r', 0))).model).toBe(`replay:${path}`);
    });

    it('names the file and the JSON pointer when a cassette file is invalid', async () => {
      const path = join(dir, 'bad.cassette.json');
      await writeFile(path, JSON.stringify({ version: 2, entries: [{ solution: 'nope' }] }));
      const error = await ReplayModel.fromFile(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelConfigError);
      expect((error as Error).message).toContain(`${path}#/version`);
      expect((error as Error).message).toContain(`${path}#/entries/0/solution`);
    });

    it('names the file when it is not JSON or missing', async () => {
      const path = join(dir, 'broken.json');
      await writeFile(path, '{ nope');
      await expect(ReplayModel.fromFile(path)).rejects.toThrow(/broken\.json:1:\d+: Expected valid JSON/);
      expect(() => ReplayModel.fromFileSync(join(dir, 'missing.json'))).toThrow(/missing\.json.*cannot be read/);
    });
  });

  describe('the models a cassette stands for and cut answers (CAS-13, CAS-15)', () => {
    it('names the model the entries of a request were recorded with', () => {
      const model = new ReplayModel([
        { match: { request: 'a' }, solution: { calls: [], output: 1 } },
        { match: { request: 'a' }, model: 'openai:gpt-5', solution: { calls: [], output: 2 } },
        { match: { request: 'b' }, model: 'anthropic:claude-haiku-4-5', solution: { calls: [], output: 3 } },
      ]);
      expect(model.modelFor('a')).toBe('openai:gpt-5');
      expect(model.modelFor('b')).toBe('anthropic:claude-haiku-4-5');
      expect(model.modelFor('c')).toBeUndefined();
    });

    it('fails a cut entry with max_tokens_exceeded carrying the part that arrived, as a provider would', async () => {
      const model = new ReplayModel([{ text: '{"calls": [], "output": "hal', cut: true, model: 'openai:gpt-4.1-mini' }]);
      const error = await model.generate({ ...request('r', 0), config: { maxTokens: 12 } }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ code: 'max_tokens_exceeded', data: { maxTokens: 12, partial: '{"calls": [], "output": "hal' } });
      expect((error as Error).message).toContain('openai:gpt-4.1-mini');
    });
  });
});
