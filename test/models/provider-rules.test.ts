/**
 * Capture and check: every request the project sends for requests/, spec/conformance/ and stress
 * documents, through the real SDKs, against loopback servers that refuse (400, in each provider's
 * words) any body breaking a documented rule; no body may break one, and every weaker form than
 * strict is said in the trace (MODEL-14..16).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { AnthropicModel } from '../../src/models/anthropic.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ModelProviders } from '../../src/models/model-providers.js';
import { OpenAIModel } from '../../src/models/openai.js';
import type { Model } from '../../src/protocol/model.js';
import { Tracer, memorySink, type TraceEvent } from '../../src/protocol/trace/trace.js';
import { startServer, type LoopbackServer } from './support/loopback.js';
import { anthropicStrict, openAIStrict, ruleChecking, type Captured } from './support/provider-rules.js';

type Provider = 'openai' | 'anthropic';

/** A document to run: a file, or an inline stress document. */
interface Case {
  name: string;
  path?: string;
  document?: unknown;
  input?: unknown;
}

function documentFiles(): Case[] {
  const cases: Case[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.json') && !/(cassette|expected|input|models)\.json$/.test(entry.name)) {
        const input = join(dirname(path), 'input.json');
        cases.push({ name: path, path: resolve(path), ...(existsSync(input) ? { input: JSON.parse(readFileSync(input, 'utf8')) } : {}) });
      }
    }
  };
  walk('requests');
  walk('spec/conformance');
  return cases;
}

const tool = (description: string, properties: Record<string, unknown>) => ({ description, properties, required: Object.keys(properties) });
const stress = (name: string, schema: unknown, extra: unknown[] = []): Case => ({
  name: `stress: ${name}`,
  document: {
    meta: { name: name.replaceAll(/[^a-z0-9]+/gi, '-') },
    context: [{ type: 'system', text: 'Answer.' }, { type: 'tool', tool: { fetch: tool('Fetches.', { what: { type: 'string' } }) } }, ...extra],
    schema,
  },
});
const words = (count: number, length: number) => Array.from({ length: count }, (_, index) => String(index).padStart(length, 'w'));
let nested: Record<string, unknown> = { type: 'string' };
for (let level = 0; level < 12; level += 1) nested = { type: 'object', properties: { deeper: nested }, required: ['deeper'] };

const STRESS: Case[] = [
  stress('enum of 300 long strings', { type: 'string', enum: words(300, 60) }),
  stress('1200 enum values', { type: 'string', enum: words(1200, 4) }),
  stress('126006 characters of property names', { type: 'object', properties: Object.fromEntries(words(2001, 63).map((name) => [name, { type: 'string' }])) }),
  stress('a map', { type: 'object', additionalProperties: { type: 'number' } }),
  stress('a free-form object', { type: 'object', properties: { song: { type: 'object' }, title: { type: 'string' } }, required: ['song', 'title'] }),
  stress('patternProperties', { type: 'object', patternProperties: { '^x-': { type: 'string' } } }),
  stress('12 levels', nested),
  stress('ref with a sibling description', {
    type: 'object',
    $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
    properties: { where: { $ref: '#/$defs/point', description: 'Where it is.' } },
    required: ['where'],
  }),
  stress('root oneOf', { oneOf: [{ type: 'string' }, { type: 'string', minLength: 3 }] }),
  stress('a bare string', { type: 'string' }),
  stress('a bare array', { type: 'array', items: { type: 'integer' } }),
  stress('a recursive tree', {
    type: 'object',
    $defs: {
      node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] },
    },
    properties: { root: { $ref: '#/$defs/node' } },
    required: ['root'],
  }),
  stress('numbers with bounds', {
    type: 'object',
    properties: { n: { type: 'integer', minimum: 1, maximum: 9 }, tags: { type: 'array', items: { type: 'string' }, minItems: 2 } },
  }),
  stress('empty texts', { type: 'string' }, [
    { type: 'system', text: '' },
    { role: 'user', content: '' },
  ]),
  {
    name: 'stress: 200 tools',
    document: {
      meta: { name: 'many-tools' },
      context: [
        { type: 'system', text: 'Use the tools.' },
        { type: 'tool', tool: Object.fromEntries(words(200, 3).map((name) => [`t${name}`, tool(`Tool ${name}.`, { value: { type: 'string' } })])) },
      ],
      schema: { type: 'string' },
    },
  },
  {
    name: 'stress: a delegating planner',
    document: {
      meta: { name: 'planner' },
      context: [{ type: 'system', text: 'Plan, delegate what a worker can do, then answer.' }],
      schema: { type: 'object', properties: { plan: { type: 'array', items: { type: 'string' } } }, required: ['plan'] },
    },
  },
];

/** What each class of captured body and traced request counts, per provider. */
interface Tally {
  bodies: number;
  strict: number;
  weaker: number;
  plain: number;
  documents: number;
}

const registry = ModelCatalog.load({ env: {}, warn: () => {} });
let server: LoopbackServer | undefined;
let current: Captured[] = [];
const tally = (): Tally => ({ bodies: 0, strict: 0, weaker: 0, plain: 0, documents: 0 });
const tallies: Record<Provider, Tally> = { openai: tally(), anthropic: tally() };
/** The documents whose bodies went out weaker than strict, with what the trace said. */
const weaker: string[] = [];

beforeAll(async () => {
  server = await startServer([(request, response) => ruleChecking(() => current)(request, response)]);
});
afterAll(async () => {
  // The measurement the check exists for: how many captured bodies are strict, per provider.
  console.log(`captured bodies: ${JSON.stringify(tallies)}\nweaker than strict:\n${weaker.join('\n')}`);
  await server?.close();
});

function modelFor(provider: Provider): Model {
  const common = { baseUrl: server!.url, registry, retry: { initialDelayMs: 1 } };
  return provider === 'openai'
    ? new OpenAIModel({ model: 'gpt-4.1', env: { OPENAI_API_KEY: 'k' }, ...common })
    : new AnthropicModel({ model: 'claude-sonnet-4-5', env: { ANTHROPIC_API_KEY: 'k' }, ...common });
}

/** The class of a captured body: strict, a weaker form (non-strict, json_object, prompt-only), or a plain-text request without a schema. */
function bodyClass(provider: Provider, body: Record<string, unknown>): 'strict' | 'weaker' | 'plain' {
  if (provider === 'openai') {
    if (openAIStrict(body)) return 'strict';
    return body.response_format !== undefined || JSON.stringify(body.messages).includes('It must match this JSON Schema') ? 'weaker' : 'plain';
  }
  if (anthropicStrict(body)) return 'strict';
  return Array.isArray(body.tools) ? 'weaker' : 'plain';
}

/** The class of a traced model.request: its schemaForm said strict, said weaker with a reason, or none (plain text). */
function eventClass(event: TraceEvent): 'strict' | 'weaker' | 'plain' | 'unsaid' {
  const form = event.schemaForm as { form?: string; reason?: string } | undefined;
  if (form === undefined) return 'plain';
  if (form.form === 'strict') return 'strict';
  return typeof form.reason === 'string' && form.reason !== '' ? 'weaker' : 'unsaid';
}

const problems: string[] = [];
const cases = [...documentFiles(), ...STRESS];

describe.each(['openai', 'anthropic'] as const)('every request sent to %s', (provider) => {
  it('breaks no documented rule, and every weaker form than strict is said', async () => {
    for (const testCase of cases) {
      current = [];
      const root = testCase.path ? dirname(testCase.path) : process.cwd();
      const runtime = createRuntime({
        root,
        models: {
          providers: new ModelProviders({ registry }),
          // Every model a document or its workers choose goes to the loopback server, never further.
          options: { cwd: root, env: { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', OPENAI_BASE_URL: server!.url, ANTHROPIC_BASE_URL: server!.url } },
        },
      });
      const sink = memorySink();
      try {
        const loaded = testCase.path ? await runtime.load(testCase.path) : runtime.validate(testCase.document, 'stress.json');
        await runtime.run(loaded, {
          model: modelFor(provider),
          tracer: new Tracer([sink]),
          signal: AbortSignal.timeout(10_000),
          ...(testCase.input === undefined ? {} : { input: testCase.input }),
        });
      } catch {
        // A document refused before sending sends nothing: nothing to check.
      } finally {
        await runtime.resolvers.close();
      }
      const captured = current;
      if (captured.length === 0) continue;
      const said = sink.events.filter((event) => event.event === 'model.request').map(eventClass);
      const bodies = captured.map((entry) => bodyClass(entry.provider, entry.body));
      for (const [index, entry] of captured.entries()) {
        const counted = tallies[entry.provider];
        counted.bodies += 1;
        counted[bodies[index] as 'strict' | 'weaker' | 'plain'] += 1;
        for (const violation of entry.violations) problems.push(`${provider} ${testCase.name}: ${violation}`);
      }
      for (const body of new Set(captured.map((entry) => entry.provider))) tallies[body].documents += 1;
      // The main example and a delegating planner (the delegate tool's free-form output_schema encoded) go out strict.
      if (/requests\/music\/|delegating planner/.test(testCase.name)) {
        if (bodies.some((kind) => kind !== 'strict')) problems.push(`${provider} ${testCase.name}: not strict`);
        if (testCase.name.includes('planner') && !JSON.stringify(captured[0]?.body).includes('output_schema')) {
          problems.push(`${provider} ${testCase.name}: no delegate tool offered`);
        }
      }
      const forms = sink.events.filter((event) => event.event === 'model.request' && eventClass(event) !== 'strict' && eventClass(event) !== 'plain');
      for (const event of forms) weaker.push(`${provider} ${testCase.name}: ${JSON.stringify(event.schemaForm)}`);
      const count = (list: string[], kind: string) => list.filter((item) => item === kind).length;
      for (const kind of ['strict', 'weaker', 'plain']) {
        if (count(bodies, kind) !== count(said, kind)) {
          problems.push(`${provider} ${testCase.name}: ${count(bodies, kind)} ${kind} bodies but ${count(said, kind)} model.request events say ${kind}`);
        }
      }
    }
    expect(problems.filter((problem) => problem.startsWith(provider))).toEqual([]);
    expect(tallies[provider].documents).toBeGreaterThan(100);
  }, 240_000);
});
