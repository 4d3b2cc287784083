/** Property test of scopes: a delegate child's prompt holds every scoped part of the parent's context and nothing unscoped, per instance. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(50);

/** Scopes the parent may grant: turn scopes, data kinds, and kinds narrowed to a path. */
const SCOPE_POOL = ['system', 'history', 'state', 'state.a', 'state.b', 'input', 'k1', 'k2'];
const INSTANCE_NAMES = ['east', 'west', 'north'];

interface Scenario {
  tag: string;
  scopes: string[];
  /** `provisioned`: the tool fixes `_scopes` (const); `requested`: the call chooses them. */
  grant: 'provisioned' | 'requested';
  delegate: 'anonymous' | 'file';
  instances: string[];
  /** Whether a call without `_instance` is made too (always, when there are no instances). */
  globalCall: boolean;
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  tag: fc.stringMatching(/^[a-z0-9]{6}$/),
  scopes: fc.shuffledSubarray(SCOPE_POOL),
  grant: fc.constantFrom('provisioned', 'requested'),
  delegate: fc.constantFrom('anonymous', 'file'),
  instances: fc.subarray(INSTANCE_NAMES),
  globalCall: fc.boolean(),
});

/** Every marker of the parent's global context, and which scope (if any) lets a child see it. */
function globalMarkers(tag: string): { marker: string; visibleWith: (scopes: string[]) => boolean }[] {
  const has =
    (...names: string[]) =>
    (scopes: string[]) =>
      names.some((name) => scopes.includes(name));
  return [
    { marker: `MARK_sys1_${tag}`, visibleWith: has('system') },
    { marker: `MARK_sys2_${tag}`, visibleWith: has('system') },
    { marker: `MARK_user_${tag}`, visibleWith: has('history') },
    { marker: `MARK_assistant_${tag}`, visibleWith: has('history') },
    { marker: `MARK_text_${tag}`, visibleWith: has('history') },
    { marker: `MARK_statea_${tag}`, visibleWith: has('state', 'state.a') },
    { marker: `MARK_stateb_${tag}`, visibleWith: has('state', 'state.b') },
    { marker: `MARK_input_${tag}`, visibleWith: has('input') },
    { marker: `MARK_k1_${tag}`, visibleWith: has('k1') },
    { marker: `MARK_k1desc_${tag}`, visibleWith: has('k1') },
    { marker: `MARK_k2_${tag}`, visibleWith: has('k2') },
    { marker: `MARK_meta_${tag}`, visibleWith: () => false },
    { marker: `MARK_planned_${tag}`, visibleWith: () => false },
  ];
}

/** The markers of one instance's own data. */
function instanceMarkers(tag: string, instance: string): { marker: string; visibleWith: (scopes: string[]) => boolean }[] {
  const has =
    (...names: string[]) =>
    (scopes: string[]) =>
      names.some((name) => scopes.includes(name));
  return [
    { marker: `MARK_${instance}a_${tag}`, visibleWith: has('state', 'state.a') },
    { marker: `MARK_${instance}b_${tag}`, visibleWith: has('state', 'state.b') },
    { marker: `MARK_${instance}k1_${tag}`, visibleWith: has('k1') },
  ];
}

const paramOf = (instance: string | undefined) => `PARAM_${instance ?? 'global'}_END`;

function parentDocument(scenario: Scenario) {
  const { tag } = scenario;
  const tool: Record<string, unknown> = {
    description: 'Ask the helper.',
    properties: {
      p: { type: 'string' },
      ...(scenario.grant === 'requested' ? { _scopes: { type: 'array', items: { enum: SCOPE_POOL } } } : {}),
    },
    required: ['p'],
    _output: { type: 'string' },
    _delegate: scenario.delegate === 'anonymous' ? 'anonymous' : './child.json',
  };
  if (scenario.grant === 'provisioned') tool._scopes = scenario.scopes;
  return {
    meta: { name: 'parent' },
    context: [
      { type: 'system', text: `You are the parent. MARK_sys1_${tag}` },
      { type: 'text', role: 'system', text: `MARK_sys2_${tag}` },
      { type: 'user', text: `Please help. MARK_user_${tag}` },
      { type: 'assistant', text: `Sure. MARK_assistant_${tag}` },
      { type: 'text', text: `MARK_text_${tag}` },
      { type: 'meta', meta: { id: `MARK_meta_${tag}` } },
      { type: 'state', state: { a: { v: `MARK_statea_${tag}` }, b: { v: `MARK_stateb_${tag}` } } },
      { type: 'input', input: { q: `MARK_input_${tag}` } },
      { type: 'data', kind: 'k1', data: { v: `MARK_k1_${tag}` }, description: `About k1: MARK_k1desc_${tag}` },
      { type: 'data', kind: 'k2', data: { v: `MARK_k2_${tag}` } },
      // Instances' own data, under other keys so it merges with (rather than replaces) the global values.
      ...scenario.instances.flatMap((instance) => [
        { type: 'state', _instance: instance, state: { a: { w: `MARK_${instance}a_${tag}` }, b: { w: `MARK_${instance}b_${tag}` } } },
        { type: 'data', kind: 'k1', _instance: instance, data: { w: `MARK_${instance}k1_${tag}` } },
      ]),
      { type: 'tool', tool: { ask: tool, noop: { properties: { note: { type: 'string' } }, _output: true } } },
      { type: 'plan', calls: [{ _tool: 'noop', note: `MARK_planned_${tag}`, _output: 1 }] },
    ],
    schema: { type: 'string' },
  };
}

const CHILD = {
  meta: { name: 'child' },
  context: [
    { type: 'system', text: 'You are the child.' },
    { type: 'input', schema: { type: 'object', properties: { p: { type: 'string' } } } },
  ],
  schema: { type: 'string' },
};

describe('scopes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'scopes-property-'));
    await writeFile(join(dir, 'child.json'), JSON.stringify(CHILD));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a delegate child sees exactly the scoped parent context: every scoped marker, nothing unscoped, nothing of another instance', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const runtime = createRuntime({ root: dir });
        const targets: (string | undefined)[] = [...scenario.instances, ...(scenario.globalCall || scenario.instances.length === 0 ? [undefined] : [])];
        const calls = targets.map((instance) => ({
          _tool: 'ask',
          p: paramOf(instance),
          ...(instance === undefined ? {} : { _instance: instance }),
          ...(scenario.grant === 'requested' ? { _scopes: scenario.scopes } : {}),
          _outputPath: '†state.answer',
        }));
        const childName = scenario.delegate === 'anonymous' ? 'anonymous:ask' : 'child';
        const model = new ReplayModel([
          { match: { request: 'parent', step: 0 }, solution: { calls, output: null } },
          { match: { request: childName, step: 0 }, solution: { calls: [], output: 'child-done' }, repeat: true },
          // The answer that ends the run carries the meta (MSG-23).
          { match: { request: 'parent', step: 1 }, solution: { calls: [], output: 'ok', meta: { id: 'next' } } },
        ]);
        const sink = memorySink();
        const loaded = runtime.validate(parentDocument(scenario), join(dir, 'parent.json'));
        const result = await runtime.run(loaded, { model, tracer: new Tracer([sink]) });
        expect(result.ok).toBe(true);
        expect(sink.events.filter((event) => event.event === 'delegate.completed')).toHaveLength(targets.length);
        for (const started of sink.events.filter((event) => event.event === 'delegate.started')) expect(started.scopes).toEqual(scenario.scopes);

        const childPrompts = sink.events
          .filter((event) => event.event === 'model.request' && event.depth === 1)
          .map((event) => (event.messages as { content: string }[]).map((message) => message.content).join('\n'));
        expect(childPrompts).toHaveLength(targets.length);
        for (const target of targets) {
          const prompts = childPrompts.filter((prompt) => prompt.includes(paramOf(target)));
          expect(prompts, `one child for ${target ?? 'the global call'}`).toHaveLength(1);
          const prompt = prompts[0]!;
          for (const { marker, visibleWith } of globalMarkers(scenario.tag)) {
            expect(prompt.includes(marker), `${marker} with scopes ${JSON.stringify(scenario.scopes)}`).toBe(visibleWith(scenario.scopes));
          }
          for (const instance of scenario.instances) {
            for (const { marker, visibleWith } of instanceMarkers(scenario.tag, instance)) {
              const expected = instance === target && visibleWith(scenario.scopes);
              expect(prompt.includes(marker), `${marker} in the child of ${target ?? 'the global call'}`).toBe(expected);
            }
            if (instance !== target) expect(prompt).not.toContain(paramOf(instance));
          }
        }
      }),
      settings,
    );
  });
});
