/** Runs with delegates given by name (DEL-21): the document's config.delegates, then the runtime's registry, at run time and up front. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, type CreateRuntimeOptions } from '../../src/create-runtime.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith } from '../helpers/cli.js';

/** A summarizer delegate that declares its input and output and says who it is in its system text. */
const summarizer = (who: string) => ({
  meta: { name: who },
  context: [
    { type: 'system', text: `You are an expert summarizer (${who}).` },
    { type: 'input', schema: { type: 'object', properties: { style: { type: 'string' }, tone: { type: 'string', description: 'TONE-FROM-DELEGATE' } } } },
  ],
  schema: { type: 'string' },
});

/** Act 015's orchestrator: state with an article, a tool delegating to SummarizerAgent with the state scoped. */
const orchestrator = (config: object = {}) => ({
  meta: { name: 'orchestrator' },
  config,
  context: [
    { type: 'state', articleText: 'A long and complex article about ARTICLE-MARKER...' },
    { type: 'tool', tool: { summarizeArticle: { properties: { style: { type: 'string' } }, _delegate: 'SummarizerAgent', _scopes: ['state'] } } },
  ],
  schema: { type: 'string' },
});

/** Runs the orchestrator at `root` with a model answering: one call, the child's summary, then the output. */
async function run(root: string, options: Partial<CreateRuntimeOptions> = {}, resolve: 'runtime' | 'upfront' = 'runtime') {
  const runtime = createRuntime({ root, ...options });
  const model = new ReplayModel([
    {
      match: { request: 'orchestrator', step: 0 },
      solution: { calls: [{ _tool: 'summarizeArticle', style: 'short', _outputPath: '†state.summary' }], output: null },
    },
    { match: { step: 0 }, solution: { calls: [], output: 'SUMMARY' } },
    { match: { request: 'orchestrator', step: 1 }, solution: { calls: [], output: 'done' } },
  ]);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, tracer: new Tracer([sink]), resolve });
  return { result, events: sink.events, model };
}

describe('delegates by name (DEL-21)', () => {
  it("resolves a name through the document's config.delegates, relative to the document, and traces the name and registry", async () => {
    const root = folderWith({
      'orchestrator.json': orchestrator({ delegates: { SummarizerAgent: './agents/summarizer.json' } }),
      'agents/summarizer.json': summarizer('doc-summarizer'),
    });
    const { result, events } = await run(root);
    expect(result.ok && result.output).toBe('done');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({
      reference: 'SummarizerAgent',
      registry: 'document',
      name: 'doc-summarizer',
      delegate: join(root, 'agents', 'summarizer.json'),
      resolution: 'runtime',
      scopes: ['state'],
    });
    const child = JSON.stringify(events.find((event) => event.event === 'model.request' && event.depth === 1)?.messages);
    expect(child).toContain('doc-summarizer');
    expect(child).toContain('ARTICLE-MARKER');
  });

  it("falls back to the runtime's registry, and the document's name wins when both have it", async () => {
    const only = folderWith({ 'orchestrator.json': orchestrator(), 'summarizer.json': summarizer('runtime-summarizer') });
    const fromRuntime = await run(only, { delegates: { SummarizerAgent: './summarizer.json' } });
    expect(fromRuntime.events.find((event) => event.event === 'delegate.started')).toMatchObject({ registry: 'runtime', name: 'runtime-summarizer' });

    const both = folderWith({
      'orchestrator.json': orchestrator({ delegates: { SummarizerAgent: './doc.json' } }),
      'doc.json': summarizer('doc-summarizer'),
      'summarizer.json': summarizer('runtime-summarizer'),
    });
    const fromDocument = await run(both, { delegates: { SummarizerAgent: './summarizer.json' } });
    expect(fromDocument.events.find((event) => event.event === 'delegate.started')).toMatchObject({ registry: 'document', name: 'doc-summarizer' });
  });

  it('runs a Request document the runtime holds in memory under a name', async () => {
    const root = folderWith({ 'orchestrator.json': orchestrator() });
    const { result, events } = await run(root, { delegates: { SummarizerAgent: summarizer('memory-summarizer') } });
    expect(result.ok && result.output).toBe('done');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ delegate: 'delegates:SummarizerAgent', name: 'memory-summarizer' });
  });

  it('merges the named delegate up front: its input schema reaches the model before the first call', async () => {
    const root = folderWith({
      'orchestrator.json': orchestrator({ delegates: { SummarizerAgent: './summarizer.json' } }),
      'summarizer.json': summarizer('doc-summarizer'),
    });
    const { result, events, model } = await run(root, {}, 'upfront');
    expect(result.ok && result.output).toBe('done');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ resolution: 'upfront', registry: 'document' });
    expect(JSON.stringify(model.requests[0]?.schema)).toContain('TONE-FROM-DELEGATE');
  });

  it('fails the call of an unknown name with delegate_not_found naming the registries searched; the model sees it', async () => {
    const root = folderWith({ 'orchestrator.json': orchestrator({ delegates: { Translator: './t.json' } }) });
    const { result, events, model } = await run(root, { delegates: { Speaker: './s.json' } });
    expect(result.ok && result.output).toBe('done');
    const failed = events.find((event) => event.event === 'call.failed');
    expect(failed?.error).toMatchObject({
      code: 'delegate_not_found',
      message: expect.stringContaining(
        "config.delegates (names: Translator), in the runtime's registry (names: Speaker), nor in the root folder's catalog (names: orchestrator)",
      ),
      registries: [
        { registry: 'document', names: ['Translator'], count: 1 },
        { registry: 'runtime', names: ['Speaker'], count: 1 },
        { registry: 'catalog', names: ['orchestrator'], count: 1 },
      ],
    });
    expect(events.some((event) => event.event === 'delegate.started')).toBe(false);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('delegate_not_found');
  });

  it('fails the run of an unknown name resolved up front, before any model call', async () => {
    const root = folderWith({ 'orchestrator.json': orchestrator() });
    const { result, model } = await run(root, {}, 'upfront');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('delegate_not_found');
    expect(model.requests).toHaveLength(0);
  });

  it("resolves a child's own names against the child's folder", async () => {
    const root = folderWith({
      'orchestrator.json': orchestrator({ delegates: { SummarizerAgent: './agents/middle.json' } }),
      'agents/middle.json': {
        meta: { name: 'middle' },
        config: { delegates: { Leaf: './leaves/leaf.json' } },
        context: [{ type: 'tool', tool: { leaf: { properties: {}, _delegate: 'Leaf' } } }],
        schema: { type: 'string' },
      },
      'agents/leaves/leaf.json': summarizer('leaf'),
    });
    const runtime = createRuntime({ root });
    const model = new ReplayModel([
      { match: { request: 'orchestrator', step: 0 }, solution: { calls: [{ _tool: 'summarizeArticle', _outputPath: '†output' }], output: null } },
      { match: { request: 'middle', step: 0 }, solution: { calls: [{ _tool: 'leaf', _outputPath: '†output' }], output: null } },
      { match: { request: 'leaf' }, solution: { calls: [], output: 'from the leaf' } },
    ]);
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('from the leaf');
    expect(sink.events.filter((event) => event.event === 'delegate.started').map((event) => event.delegate)).toEqual([
      join(root, 'agents', 'middle.json'),
      join(root, 'agents', 'leaves', 'leaf.json'),
    ]);
  });
});
