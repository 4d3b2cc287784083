/** The one model-choice policy (CLI-3 for the top run, DEL-16 for child runs), as a table. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODELS, ModelChooser } from '../../src/models/choose-model.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ModelProviders } from '../../src/models/model-providers.js';
import type { RequestConfig, RequestDocument } from '../../src/protocol/types.js';

const folder = mkdtempSync(join(tmpdir(), 'choose-model-'));
const cassette = { version: 1, entries: [{ match: {}, solution: { calls: [], output: 'x' } }] };
writeFileSync(join(folder, 'with.json'), '{}');
writeFileSync(join(folder, 'with.cassette.json'), JSON.stringify(cassette));
writeFileSync(join(folder, 'other.cassette.json'), JSON.stringify(cassette));
writeFileSync(
  join(folder, 'recorded.cassette.json'),
  JSON.stringify({ version: 1, entries: [{ match: { request: 'top' }, model: 'anthropic:recorded', solution: { calls: [], output: 'x' } }] }),
);

const catalog = new ModelCatalog(
  {
    models: {
      'openai:fast-o': { tier: 'fast' },
      'anthropic:fast-a': { tier: 'fast' },
      'openai:deep-o': { tier: 'deep' },
      'anthropic:balanced-a': { tier: 'balanced' },
    },
  },
  { warn: () => {} },
);

function chooser(env: Record<string, string>) {
  return new ModelChooser(new ModelProviders({ registry: catalog }), { cwd: folder, env });
}

const doc = (config?: RequestConfig): RequestDocument => ({ context: [], schema: {}, ...(config ? { config } : {}) });
const OPENAI = { OPENAI_API_KEY: 'sk-o' };
const ANTHROPIC = { ANTHROPIC_API_KEY: 'sk-a' };
const BOTH = { ...OPENAI, ...ANTHROPIC };

describe('the top run (CLI-3)', () => {
  const rows: Array<[string, { spec?: string; file?: string; env: Record<string, string>; config?: RequestConfig }, string | undefined, string]> = [
    ['--model wins over keys and cassettes', { spec: 'anthropic:x', file: 'with.json', env: BOTH }, 'anthropic:x', 'option'],
    ['an OpenAI key picks the OpenAI default', { file: 'with.json', env: OPENAI }, DEFAULT_MODELS.openai, 'api-key'],
    ['an Anthropic key picks the Anthropic default', { file: 'with.json', env: ANTHROPIC }, DEFAULT_MODELS.anthropic, 'api-key'],
    ['with both keys OpenAI comes first', { env: BOTH }, DEFAULT_MODELS.openai, 'api-key'],
    ['the document model of the keyed provider', { env: OPENAI, config: { model: 'openai:own' } }, 'openai:own', 'api-key'],
    ['a document model of another provider is passed over', { env: OPENAI, config: { model: 'anthropic:own' } }, DEFAULT_MODELS.openai, 'api-key'],
    ['a model of the document tier from the keyed provider', { env: ANTHROPIC, config: { tier: 'fast' } }, 'anthropic:fast-a', 'api-key'],
    ['the document model comes before its tier', { env: OPENAI, config: { model: 'openai:own', tier: 'fast' } }, 'openai:own', 'api-key'],
    ['no tier model of the keyed provider: its default', { env: OPENAI, config: { tier: 'balanced' } }, DEFAULT_MODELS.openai, 'api-key'],
    ['no key: the cassette beside the request', { file: 'with.json', env: {} }, `replay:${join(folder, 'with.cassette.json')}`, 'cassette'],
    ['no key and no cassette: none', { file: 'without.json', env: {} }, undefined, 'none'],
    ['a URL request has no sibling cassette', { file: 'http://127.0.0.1:1/with.json', env: {} }, undefined, 'none'],
  ];
  it.each(rows)('%s', (_name, given, expected, source) => {
    const location = given.file?.startsWith('http') ? given.file : join(folder, given.file ?? 'without.json');
    const choice = chooser(given.env).forTopRun(doc(given.config), {
      ...(given.spec ? { spec: given.spec } : {}),
      location,
      isFile: !location.startsWith('http'),
      env: given.env,
    });
    expect(choice.source).toBe(source);
    expect(choice.model?.id).toBe(expected);
  });
});

describe('a child run (DEL-16)', () => {
  const rows: Array<[string, { env: Record<string, string>; inherited?: string; config?: RequestConfig }, string | undefined]> = [
    [
      'a replaying caller plays every part, whatever the child asks',
      { env: OPENAI, inherited: 'replay:other.cassette.json', config: { model: 'openai:own' } },
      `replay:${join(folder, 'other.cassette.json')}`,
    ],
    ['its own model', { env: OPENAI, inherited: 'openai:parent', config: { model: 'openai:own' } }, 'openai:own'],
    ['its own tier, the caller provider first', { env: BOTH, inherited: 'anthropic:parent', config: { tier: 'fast' } }, 'anthropic:fast-a'],
    ['its own tier, only models whose key is set', { env: ANTHROPIC, config: { tier: 'fast' } }, 'anthropic:fast-a'],
    ['no model or tier: the caller model', { env: OPENAI, inherited: 'openai:parent' }, 'openai:parent'],
    ['no caller model and nothing of its own: none', { env: {} }, undefined],
  ];
  it.each(rows)('%s', (_name, given, expected) => {
    const models = chooser(given.env);
    const inherited = given.inherited ? models.create(given.inherited) : undefined;
    expect(models.forChild(doc(given.config), inherited)?.id).toBe(expected);
  });

  it('fails with no_model_available_for_tier when no model of the tier can be created here', () => {
    const models = chooser(ANTHROPIC);
    expect(() => models.forChild(doc({ tier: 'deep' }), models.create('anthropic:parent'))).toThrow(
      expect.objectContaining({ code: 'no_model_available_for_tier' }),
    );
  });

  it('creates each spec once', () => {
    const models = chooser(OPENAI);
    expect(models.forChild(doc({ model: 'openai:own' }), undefined)).toBe(models.forChild(doc({ model: 'openai:own' }), undefined));
  });
});

describe('a replayed run stands for a live model (CAS-15)', () => {
  const replayed = (models: ModelChooser) => models.create('replay:other.cassette.json');

  it('a child stands for its own model, else its tier (keys aside, the caller provider first), else what its caller stands for', () => {
    const models = chooser({});
    const caller = replayed(models);
    expect(models.forChild(doc({ model: 'openai:own' }), caller)?.standsFor).toBe('openai:own');
    expect(models.forChild(doc({ tier: 'fast' }), caller, 'anthropic:planner')?.standsFor).toBe('anthropic:fast-a');
    expect(models.forChild(doc({ tier: 'fast' }), caller, 'openai:planner')?.standsFor).toBe('openai:fast-o');
    expect(models.forChild(doc(), caller, 'anthropic:planner')?.standsFor).toBe('anthropic:planner');
    // The cassette still plays it: one replay model, entries consumed once across the tree.
    expect(models.forChild(doc({ tier: 'fast' }), caller)?.id).toBe(caller.id);
  });

  it('a top run stands for its document model, else its tier, else the model its cassette entries name, else nothing', () => {
    const models = chooser({});
    const model = models.create(`replay:${join(folder, 'recorded.cassette.json')}`);
    expect(models.standsFor(model, doc({ model: 'anthropic:own' }), 'top')).toBe('anthropic:own');
    expect(models.standsFor(model, doc({ tier: 'deep' }), 'top')).toBe('openai:deep-o');
    expect(models.standsFor(model, doc(), 'top')).toBe('anthropic:recorded');
    expect(models.standsFor(model, doc(), 'another')).toBeUndefined();
    const live = chooser(OPENAI);
    expect(live.standsFor(live.create('openai:live'), doc({ model: 'anthropic:own' }), 'top')).toBe('openai:live');
  });

  it('the command line top run is a stand-in when it replays', () => {
    const choice = chooser({}).forTopRun(doc({ model: 'anthropic:own' }), { location: join(folder, 'with.json'), isFile: true, env: {}, name: 'with' });
    expect(choice.model).toMatchObject({ id: `replay:${join(folder, 'with.cassette.json')}`, standsFor: 'anthropic:own' });
  });
});

describe("a worker's model: its tier's, fresh (DEL-28)", () => {
  it('takes the tier model of the caller provider first, only models that can be created here, never the caller model', () => {
    expect(chooser(BOTH).forTier('fast', chooser(BOTH).create('anthropic:planner')).id).toBe('anthropic:fast-a');
    expect(chooser(BOTH).forTier('fast', chooser(BOTH).create('openai:planner')).id).toBe('openai:fast-o');
    expect(chooser(ANTHROPIC).forTier('fast', { id: 'openai:planner', generate: async () => ({}) as never }).id).toBe('anthropic:fast-a');
  });

  it('takes a --tier override before the catalog', () => {
    const models = new ModelChooser(new ModelProviders({ registry: catalog }), { cwd: folder, env: BOTH }, { fast: 'anthropic:override' });
    expect(models.forTier('fast', models.create('openai:planner')).id).toBe('anthropic:override');
    expect(models.tiers()).toEqual(['fast', 'balanced', 'deep']);
  });

  it('answers no_model_available_for_tier when none can be created, naming an override that cannot', () => {
    expect(() => chooser(ANTHROPIC).forTier('deep', undefined)).toThrow(expect.objectContaining({ code: 'no_model_available_for_tier' }));
    const models = new ModelChooser(new ModelProviders({ registry: catalog }), { cwd: folder, env: ANTHROPIC }, { fast: 'openai:no-key' });
    expect(() => models.forTier('fast', undefined)).toThrow(
      expect.objectContaining({ code: 'no_model_available_for_tier', message: expect.stringContaining('--tier') }),
    );
  });

  it('is played by the caller cassette when the caller replays, standing for the tier model', () => {
    const models = chooser({});
    const caller = models.create('replay:other.cassette.json');
    expect(models.forTier('fast', caller, 'anthropic:planner')).toMatchObject({ id: caller.id, standsFor: 'anthropic:fast-a' });
  });

  it('lists the tiers that have a model, and those --tier adds', () => {
    const small = new ModelCatalog({ models: { 'openai:deep-o': { tier: 'deep' } } }, { warn: () => {} });
    const models = new ModelChooser(new ModelProviders({ registry: small }), { cwd: folder, env: {} }, { fast: 'openai:x' });
    expect(models.tiers()).toEqual(['fast', 'deep']);
    expect(small.tierNames()).toEqual(['deep']);
  });
});
