import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ModelProviders } from '../../src/models/model-providers.js';
import { ReplayModel } from '../../src/models/replay.js';
import { tempDir } from '../helpers/cli.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';

const music = resolve('requests/music');

describe('the Delegation Activity', () => {
  it('runs the music makers: producer → composer → sound designer, and producer → sound designer in parallel', async () => {
    const runtime = createRuntime({ root: music });
    const model = await ReplayModel.fromFile(resolve(music, 'producer.cassette.json'));
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(resolve(music, 'producer.json')), {
      model,
      input: { brief: 'a sad ballad', ambience: 'rain on a window' },
      tracer: new Tracer([sink]),
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.output).toMatchObject({ title: 'Rain on Empty Streets' });
    const started = sink.events.filter((event) => event.event === 'delegate.started');
    expect(started.map((event) => event.name).sort()).toEqual(['composer', 'sound-designer', 'sound-designer']);
    // usage rolls up: the total counts every model call of the tree.
    expect(result.usageTotal.inputTokens).toBe(640 + 520 + 760 + 210 + 205 + 1180);
    expect(result.usage.inputTokens).toBe(640 + 1180);
    // Steps and tool calls count the whole tree like its tokens (LOOP-15, DEL-17): producer 2 + composer 2 + two sound designers 1 each.
    expect([result.usage.steps, result.usageTotal.steps]).toEqual([2, 6]);
    const completed = sink.events.filter((event) => event.event === 'run.completed');
    const ownCalls = completed.reduce((sum, event) => sum + (event.usage as { toolCalls: number }).toolCalls, 0);
    expect(result.usageTotal.toolCalls).toBe(ownCalls);
    expect(result.usageTotal.toolCalls).toBeGreaterThan(result.usage.toolCalls);
    // The composer and the direct sound designer run concurrently: both start before either completes.
    const order = sink.events.filter((event) => event.event.startsWith('call.') && event.depth === 0).map((event) => `${event.event} ${String(event.tool)}`);
    expect(order.slice(0, 2).sort()).toEqual(['call.started compose', 'call.started design_sound']);
    expect(model.unused()).toEqual([]);
    expect(sink.events.filter((event) => event.event === 'call.failed' || event.event === 'delegate.failed')).toEqual([]);
  });
});

async function runExample(folder: string, file: string, input: unknown, options: { cassette?: string; resolve?: 'runtime' | 'upfront' } = {}) {
  const root = resolve('requests', folder);
  const runtime = createRuntime({ root });
  const model = await ReplayModel.fromFile(resolve(root, options.cassette ?? file.replace(/\.json$/, '.cassette.json')));
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(resolve(root, file)), {
    model,
    input,
    tracer: new Tracer([sink]),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  expect(sink.events.filter((event) => event.event === 'call.failed' || event.event === 'delegate.failed')).toEqual([]);
  return { result, events: sink.events, model };
}

describe('delegation examples', () => {
  it('gives the summarizer the scoped state and nothing unscoped', async () => {
    const { result, events } = await runExample('summarizer', 'meeting.json', undefined);
    expect(result.ok).toBe(true);
    const child = events.find((event) => event.event === 'model.request' && event.depth === 1);
    const prompt = JSON.stringify(child?.messages);
    expect(prompt).toContain('billing migration');
    expect(prompt).not.toContain('CONFIDENTIAL-SALARY-BANDS');
    expect(prompt).not.toContain('wrap up today');
  });

  it('runs the translator on two instances, each seeing only its own state', async () => {
    const { result, events } = await runExample('translator', 'localize.json', { text: 'You can now pin files in your workspace.' });
    expect(result.ok && result.output).toMatchObject({ de: expect.stringContaining('Arbeitsbereich') });
    const children = events.filter((event) => event.event === 'model.request' && event.depth === 1).map((event) => JSON.stringify(event.messages));
    expect(children).toHaveLength(2);
    for (const prompt of children) expect(prompt.includes('French') !== prompt.includes('German')).toBe(true);
  });

  it('bridges mismatched inputs at run time (speaker_EN)', async () => {
    const { result, events } = await runExample('speaker', 'orchestrator.json', { userId: 'u_123', text: 'Hello, world!' });
    expect(result.ok && result.output).toEqual({ delivered: true, to: 'u_123', body: 'Hello, world!' });
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ resolution: 'runtime' });
  });

  it('merges schemas up front (speaker_EN)', async () => {
    const { result, events } = await runExample(
      'speaker',
      'orchestrator.json',
      { userId: 'u_123', text: 'Hello, world!' },
      { cassette: 'orchestrator.upfront.cassette.json', resolve: 'upfront' },
    );
    expect(result.ok && result.output).toEqual({ delivered: true, to: 'u_123', body: 'Hello, world!' });
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ resolution: 'upfront' });
    const schema = JSON.stringify(events.find((event) => event.event === 'model.request')?.schema);
    expect(schema).toContain('recipientId');
  });
});

describe('model choice of child runs', () => {
  const files = (childConfig: object) => {
    const root = tempDir('models-');
    writeFileSync(
      join(root, 'parent.json'),
      JSON.stringify({
        meta: { name: 'parent' },
        context: [{ type: 'tool', tool: { ask: { properties: {}, _delegate: './child.json' } } }],
        schema: { type: 'string' },
      }),
    );
    writeFileSync(
      join(root, 'child.json'),
      JSON.stringify({ meta: { name: 'child' }, config: childConfig, context: [{ type: 'system', text: 'Child.' }], schema: { type: 'string' } }),
    );
    return root;
  };
  const entries = [
    { match: { request: 'parent', step: 0 }, solution: { calls: [{ _tool: 'ask', _outputPath: '†output' }], output: null } },
    { match: { request: 'child' }, solution: { calls: [], output: 'from child' } },
  ];
  /** A scripted model that is not a replay (as a live provider would be), answering from entries. */
  const scripted = (id: string) => {
    const replay = new ReplayModel(entries);
    return { id, requests: replay.requests, generate: (request: ModelRequest) => replay.generate(request).then((response) => ({ ...response, model: id })) };
  };

  it("uses the child's own config.model, created through the providers", async () => {
    const providers = new ModelProviders().register('fake', (name) => scripted(`fake:${name}`));
    const root = files({ model: 'fake:child-model' });
    const runtime = createRuntime({ root, models: { providers, options: { cwd: root, env: {} } } });
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'parent.json')), { model: scripted('live:parent'), tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('from child');
    expect(sink.events.find((event) => event.event === 'delegate.started')).toMatchObject({ model: 'fake:child-model' });
  });

  it('inherits the caller model when the child names none, and keeps a replayed cassette for every run, standing for the child model', async () => {
    const root = files({});
    const runtime = createRuntime({ root });
    const sink = memorySink();
    await runtime.run(await runtime.load(join(root, 'parent.json')), { model: scripted('live:parent'), tracer: new Tracer([sink]) });
    expect(sink.events.find((event) => event.event === 'delegate.started')).toMatchObject({ model: 'live:parent' });

    const pinnedRoot = files({ model: 'openai:gpt-4.1-mini' });
    const pinned = createRuntime({ root: pinnedRoot });
    const replaySink = memorySink();
    const result = await pinned.run(await pinned.load(join(pinnedRoot, 'parent.json')), { model: new ReplayModel(entries), tracer: new Tracer([replaySink]) });
    expect(result.ok).toBe(true);
    // The cassette plays the child, which stands for the model it would use live (CAS-15).
    expect(replaySink.events.find((event) => event.event === 'delegate.started')).toMatchObject({ model: 'openai:gpt-4.1-mini' });
    expect(replaySink.events.find((event) => event.event === 'run.started' && event.depth === 1)).toMatchObject({ model: 'replay:inline' });
  });

  it("picks a model of the child's own tier from the registry, the caller's provider first", async () => {
    const registry = new ModelCatalog({
      models: {
        'other:huge': { tier: 'deep' },
        'fake:small': { tier: 'fast' },
        'fake:big': { tier: 'deep' },
      },
    });
    const providers = new ModelProviders({ registry, builtins: false })
      .register('fake', (name) => scripted(`fake:${name}`))
      .register('other', (name) => scripted(`other:${name}`));
    const root = files({ tier: 'deep' });
    const runtime = createRuntime({ root, models: { providers, options: { cwd: root, env: {} } } });
    const sink = memorySink();
    await runtime.run(await runtime.load(join(root, 'parent.json')), { model: scripted('fake:parent'), tracer: new Tracer([sink]) });
    expect(sink.events.find((event) => event.event === 'delegate.started')).toMatchObject({ model: 'fake:big', tier: 'deep' });
  });

  it('fails the call with no_model_available_for_tier when no model of the tier can be used', async () => {
    const registry = new ModelCatalog({ models: { 'keyless:big': { tier: 'deep' } } });
    const providers = new ModelProviders({ registry, builtins: false }).register('keyless', () => {
      throw new Error('no key');
    });
    const root = files({ tier: 'deep' });
    const runtime = createRuntime({ root, models: { providers, options: { cwd: root, env: {} } } });
    const sink = memorySink();
    await runtime.run(await runtime.load(join(root, 'parent.json')), { model: scripted('fake:parent'), tracer: new Tracer([sink]) });
    expect(sink.events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'no_model_available_for_tier' } });
  });
});
