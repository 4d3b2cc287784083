/** Property test of call-level `_scopes` on explicit calls (SCOPE-10): an Activity or delegate never receives more than its tool's scopes allow, whatever the call asks. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Message } from '../../src/protocol/types.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(60);

const SCOPE_POOL = ['system', 'history', 'state', 'state.a', 'input', 'k1', 'tool'];

/** How the tool declares `_scopes`: not at all, fixed (provisioned), or a wider schema (requested). */
type Declaration = { kind: 'none' } | { kind: 'fixed'; scopes: string[] } | { kind: 'requested'; allowed: string[] };

interface Scenario {
  declaration: Declaration;
  /** What the call asks for (undefined: nothing). */
  asked: string[] | undefined;
  executor: 'activity' | 'delegate';
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  declaration: fc.oneof(
    fc.constant<Declaration>({ kind: 'none' }),
    fc.shuffledSubarray(SCOPE_POOL).map<Declaration>((scopes) => ({ kind: 'fixed', scopes })),
    fc.subarray(SCOPE_POOL, { minLength: 1 }).map<Declaration>((allowed) => ({ kind: 'requested', allowed })),
  ),
  asked: fc.option(fc.shuffledSubarray(SCOPE_POOL), { nil: undefined }),
  executor: fc.constantFrom('activity', 'delegate'),
});

/** The markers of the parent's context, and the scopes that let each through. */
const MARKERS: { marker: string; scopes: string[] }[] = [
  { marker: 'MARK_SYSTEM', scopes: ['system'] },
  { marker: 'MARK_USER', scopes: ['history'] },
  { marker: 'MARK_STATE_A', scopes: ['state', 'state.a'] },
  { marker: 'MARK_STATE_B', scopes: ['state'] },
  { marker: 'MARK_INPUT', scopes: ['input'] },
  { marker: 'MARK_K1', scopes: ['k1'] },
  { marker: 'MARK_K2', scopes: [] },
  { marker: 'MARK_TOOL', scopes: ['tool'] },
];

/** The scopes the tool lets this call's executor receive: its fixed ones, or what the call asked within the schema. */
function allowedBy(declaration: Declaration): string[] {
  if (declaration.kind === 'none') return [];
  return declaration.kind === 'fixed' ? declaration.scopes : declaration.allowed;
}

/** True when the tool admits what the call asks (SCOPE-2, SCOPE-10). */
function admits(declaration: Declaration, asked: string[] | undefined): boolean {
  if (asked === undefined) return true;
  if (declaration.kind === 'none') return false;
  if (declaration.kind === 'fixed') return JSON.stringify(asked) === JSON.stringify(declaration.scopes);
  return asked.every((scope) => declaration.allowed.includes(scope));
}

function parentDocument(scenario: Scenario, call: Record<string, unknown>) {
  const { declaration } = scenario;
  const tool: Record<string, unknown> = {
    description: 'Ask the helper.',
    properties: {
      p: { type: 'string' },
      ...(declaration.kind === 'requested' ? { _scopes: { type: 'array', items: { enum: declaration.allowed } } } : {}),
    },
    ...(scenario.executor === 'delegate' ? { _delegate: 'anonymous', _output: { type: 'string' } } : {}),
  };
  if (declaration.kind === 'fixed') tool._scopes = declaration.scopes;
  return {
    meta: { name: 'parent' },
    context: [
      { type: 'system', text: 'MARK_SYSTEM' },
      { type: 'user', text: 'MARK_USER' },
      { type: 'state', state: { a: 'MARK_STATE_A', b: 'MARK_STATE_B' } },
      { type: 'input', input: { q: 'MARK_INPUT' } },
      { type: 'data', kind: 'k1', data: 'MARK_K1' },
      { type: 'data', kind: 'k2', data: 'MARK_K2' },
      { type: 'tool', tool: { other: { description: 'MARK_TOOL', properties: {} } } },
      { type: 'tool', tool: { ask: tool } },
      // A plan delivers the call as written: no Solution schema stands between it and execution.
      { type: 'plan', calls: [call] },
    ],
    schema: { type: 'string' },
  };
}

describe('call-level scopes on explicit calls (SCOPE-10)', () => {
  it("never give an Activity or delegate more than the tool's scopes allow, and refuse a call asking for more by the rule's name", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const received: string[] = [];
        const runtime = createRuntime({
          activities: scenario.executor === 'activity' ? { ask: (_call, _tool, context: Message[]) => received.push(JSON.stringify(context)) } : {},
        });
        const call = { _tool: 'ask', p: 'PARAM', ...(scenario.asked === undefined ? {} : { _scopes: scenario.asked }), _outputPath: '†state.r' };
        const model = new ReplayModel([
          { match: { request: 'anonymous:ask' }, solution: { calls: [], output: 'child-done' }, repeat: true },
          { match: { request: 'parent' }, solution: { calls: [], output: 'ok' } },
        ]);
        const sink = memorySink();
        const result = await runtime.run(runtime.validate(parentDocument(scenario, call)), { model, tracer: new Tracer([sink]) });
        expect(result.ok).toBe(true);
        const childPrompts = sink.events.filter((event) => event.event === 'model.request' && event.depth === 1).map((event) => JSON.stringify(event.messages));
        const seen = [...received, ...childPrompts];

        // Whatever ran saw nothing its tool does not allow.
        const allowed = allowedBy(scenario.declaration);
        for (const text of seen) {
          for (const { marker, scopes } of MARKERS) {
            if (text.includes(marker))
              expect(
                scopes.some((scope) => allowed.includes(scope)),
                `${marker} with ${JSON.stringify(scenario)}`,
              ).toBe(true);
          }
        }
        if (admits(scenario.declaration, scenario.asked)) {
          expect(seen).toHaveLength(1);
        } else {
          // Refused before anything ran, naming the rule.
          expect(seen).toEqual([]);
          expect(sink.events.some((event) => event.event === 'delegate.started')).toBe(false);
          const failed = sink.events.find((event) => event.event === 'call.failed');
          expect(failed?.error).toMatchObject({ code: 'invalid_params', message: expect.stringContaining('spec/scopes.md SCOPE-10') });
        }
      }),
      settings,
    );
  });
});
