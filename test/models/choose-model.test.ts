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
