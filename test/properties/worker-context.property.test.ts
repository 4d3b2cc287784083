/** Property test of a `delegate` worker's context (DEL-25): it sees exactly the included items in explicit mode, and in minimal mode only its task — nothing else of the planner, on any instance. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message, RequestDocument } from '../../src/protocol/types.js';
import { eventsOf, promptOf, replayRun, tierRuntime } from '../helpers/tier-runtime.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(60);

/** The planner's context: each piece carries a marker, and the include items that let it through. */
const PIECES: { message: Message; marker: string; through: string[] }[] = [
  { message: { type: 'system', text: 'MARK_SYSTEM plan the work.' }, marker: 'MARK_SYSTEM', through: ['system'] },
  { message: { type: 'user', text: 'MARK_USER please.' }, marker: 'MARK_USER', through: ['history'] },
  { message: { type: 'state', state: { a: 'MARK_STATE_A', b: 'MARK_STATE_B' } }, marker: 'MARK_STATE_A', through: ['state', '†state', '†state.a'] },
  { message: { type: 'state', state: { b: 'MARK_STATE_B' } }, marker: 'MARK_STATE_B', through: ['state', '†state', '†state.b'] },
  { message: { type: 'input', input: { topic: 'MARK_INPUT' } }, marker: 'MARK_INPUT', through: ['input', '†input', '†input.topic'] },
  { message: { type: 'data', kind: 'k1', data: { v: 'MARK_K1' } }, marker: 'MARK_K1', through: ['k1', '†k1', '†k1.v'] },
  { message: { type: 'data', kind: 'k2', data: { v: 'MARK_K2' } }, marker: 'MARK_K2', through: ['k2', '†k2'] },
  // Instance data: only a call on that instance may include it, and never another instance's.
  { message: { type: 'data', kind: 'k1', _instance: 'left', data: { w: 'MARK_LEFT' } }, marker: 'MARK_LEFT', through: ['@left:k1', '@left:†k1'] },
  { message: { type: 'data', kind: 'k1', _instance: 'right', data: { w: 'MARK_RIGHT' } }, marker: 'MARK_RIGHT', through: ['@right:k1', '@right:†k1'] },
];

const ITEMS = ['system', 'history', 'state', '†state', '†state.a', '†state.b', 'input', '†input', '†input.topic', 'k1', '†k1', '†k1.v', 'k2', '†k2'];
const INSTANCES = [undefined, 'left', 'right'] as const;

interface Scenario {
  mode: 'minimal' | 'explicit';
  include: string[];
  instance: (typeof INSTANCES)[number];
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  mode: fc.constantFrom('minimal' as const, 'explicit' as const),
  include: fc.shuffledSubarray(ITEMS),
  instance: fc.constantFrom(...INSTANCES),
});

/** Whether the worker must see a piece: minimal sees none; explicit, the pieces an item lets through, on the call's instance. */
function expectedVisible(scenario: Scenario, through: string[]): boolean {
  if (scenario.mode === 'minimal') return false;
  return scenario.include.some((item) => through.includes(item) || (scenario.instance !== undefined && through.includes(`@${scenario.instance}:${item}`)));
}

function planner(): RequestDocument {
  return {
    meta: { name: 'planner' },
    config: { model: 'openai:gpt-5' },
    context: [
      ...PIECES.map((piece) => piece.message),
      { type: 'tool', tool: { secretTool: { type: 'object', description: 'MARK_TOOL', properties: {}, _output: { type: 'string' } } } },
    ],
    schema: { type: 'string' },
  };
}

describe('what a delegate worker sees (DEL-25, SCOPE-6, SCOPE-7)', () => {
  it('sees exactly the included items in explicit mode, only the task in minimal mode, and nothing else of the planner', async () => {
    const runtime = tierRuntime();
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const context = scenario.mode === 'minimal' ? { mode: 'minimal' } : { mode: 'explicit', include: scenario.include };
        const call = {
          _tool: 'delegate',
          tier: 'fast',
          task: 'MARK_TASK do it.',
          context,
          allowed_tools: [],
          _outputPath: '†state.result',
          ...(scenario.instance ? { _instance: scenario.instance } : {}),
        };
        const { events } = await replayRun(runtime, planner(), [
          { match: { request: 'planner', step: 0 }, solution: { calls: [call], output: null } },
          { match: { request: 'planner', step: 1 }, solution: { calls: [], output: 'done' } },
          { match: { request: 'anonymous:delegate' }, solution: { calls: [], output: 'ok' } },
        ]);
        const asked = eventsOf(events, 'model.request').find((event) => event.depth === 1);
        const seen = `${promptOf(asked)}\n${JSON.stringify(asked?.schema)}`;
        expect(seen).toContain('MARK_TASK');
        expect(seen).not.toContain('MARK_TOOL');
        for (const piece of PIECES)
          expect(seen.includes(piece.marker), `${piece.marker} for ${JSON.stringify(scenario)}`).toBe(expectedVisible(scenario, piece.through));
      }),
      settings,
    );
  });
});
