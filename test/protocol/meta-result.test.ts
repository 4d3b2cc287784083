/** Meta from the model (act 016, spec/messages.md MSG-23): validated, kept, and returned with the run's result and `run.completed`. */
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../src/models/replay.js';
import { RequestError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { RequestDocument } from '../../src/protocol/types.js';

const identity = { domain: 'reactor.ideas.services', path: '/games/321', version: '1.2.3', branches: ['main'] };

function gameDocument(extra: object[] = [{ type: 'meta', meta: identity }]): RequestDocument {
  return {
    meta: { name: 'game' },
    context: [
      ...extra,
      { type: 'state', state: { turn: 4 } },
      { type: 'tool', tool: { note: { properties: { text: { type: 'string' } }, required: ['text'], _output: { type: 'string' } } } },
    ],
    schema: { type: 'object', properties: { turn: { type: 'number' } }, required: ['turn'] },
  } as RequestDocument;
}

async function run(document: RequestDocument, entries: ConstructorParameters<typeof ReplayModel>[0]) {
  const sink = memorySink();
  const runtime = new Runtime();
  const result = await runtime.run(runtime.validate(document), { model: new ReplayModel(entries), tracer: new Tracer([sink]) });
  return { result, events: sink.events };
}

describe('meta from the model (MSG-23)', () => {
  it('returns the last meta the model wrote, with the result and in run.completed', async () => {
    const { result, events } = await run(gameDocument(), [
      { match: { step: 0 }, solution: { meta: { ...identity, version: '1.2.4' }, calls: [{ _tool: 'note', text: 'a', _output: 'a' }], output: null } },
      { match: { step: 1 }, solution: { meta: { ...identity, version: '1.2.5' }, calls: [], output: { turn: 5 } } },
    ]);
    expect(result.ok).toBe(true);
    expect(result.ok && result.meta).toEqual({ ...identity, version: '1.2.5' });
    expect(events.find((event) => event.event === 'run.completed')).toMatchObject({ output: { turn: 5 }, meta: { ...identity, version: '1.2.5' } });
  });

  it('asks no meta of an answer that does not end the run', async () => {
    const { result, events } = await run(gameDocument(), [
      { match: { step: 0 }, solution: { calls: [{ _tool: 'note', text: 'a', _output: 'a' }], output: null } },
      { match: { step: 1 }, solution: { meta: { ...identity, version: '1.2.4' }, calls: [], output: { turn: 5 } } },
    ]);
    expect(result.ok && result.meta).toEqual({ ...identity, version: '1.2.4' });
    expect(events.filter((event) => event.event === 'model.request').map((event) => event.attempt)).toEqual([0, 0]);
  });

  it('re-asks an answer that ends the run without meta, or with a meta of another shape', async () => {
    const { result, events } = await run(gameDocument(), [
      { match: { step: 0 }, solution: { calls: [], output: { turn: 5 } } },
      { match: { step: 0 }, solution: { meta: { version: '1.2.4' }, calls: [], output: { turn: 5 } } },
      { match: { step: 0 }, solution: { meta: { ...identity, version: '1.3.0' }, calls: [], output: { turn: 5 } } },
    ]);
    expect(result.ok && result.meta).toEqual({ ...identity, version: '1.3.0' });
    const requests = events.filter((event) => event.event === 'model.request');
    expect(JSON.stringify(requests[1])).toContain('has no meta');
    expect(JSON.stringify(requests[2])).toContain('domain');
  });

  it('is null when the context has a meta message and no answer wrote one (a run its plans complete)', async () => {
    const planned = gameDocument([
      { type: 'meta', meta: identity },
      { type: 'plan', calls: [{ _tool: 'note', text: 'x', _output: { turn: 1 }, _outputPath: '†output' }] },
    ]);
    planned.context = planned.context.map((message) =>
      message.type === 'tool'
        ? { type: 'tool', tool: { note: { properties: { text: { type: 'string' } }, required: ['text'], _output: { type: 'object' } } } }
        : message,
    );
    const { result, events } = await run(planned, []);
    expect(result.ok).toBe(true);
    expect(result.ok && result.meta).toBeNull();
    expect(events.find((event) => event.event === 'run.completed')).toHaveProperty('meta', null);
  });

  it('is absent from the result and run.completed when the context has no meta message', async () => {
    // Without a meta message, the Solution has no meta to write.
    const { result } = await run(gameDocument([]), [
      { match: { step: 0 }, repeat: true, solution: { meta: { any: 'thing' }, calls: [], output: { turn: 1 } } },
    ]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('invalid_model_output');
    const plain = await run(gameDocument([]), [{ match: { step: 0 }, solution: { calls: [], output: { turn: 1 } } }]);
    expect(plain.result.ok).toBe(true);
    expect(plain.result).not.toHaveProperty('meta');
    expect(plain.events.find((event) => event.event === 'run.completed')).not.toHaveProperty('meta');
  });

  it('refuses at load a meta schema that is no schema, and a meta that does not match its own schema', () => {
    const problems = (meta: object) => {
      try {
        new Runtime().validate(gameDocument([meta]), '/docs/game.json');
        return [];
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        return error.problems.map((problem) => `${problem.pointer} ${problem.message}`);
      }
    };
    expect(problems({ type: 'meta', meta: identity, schema: { type: 'nonsense' } })).toEqual([expect.stringMatching(/^\/context\/0\/schema /)]);
    expect(problems({ type: 'meta', meta: { version: 3 }, schema: { type: 'object', properties: { version: { type: 'string' } } } })).toEqual([
      expect.stringMatching(/^\/context\/0\/meta Expected the meta to match its own schema/),
    ]);
    expect(problems({ type: 'meta', meta: identity, schema: { type: 'object' } })).toEqual([]);
  });
});
