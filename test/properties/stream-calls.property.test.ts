/** Property: a streamed call starts early only when every call before it, and everything written before it, is valid; a valid answer delivers each call once (LOOP-11). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/protocol/model.js';
import { StreamedCalls } from '../../src/models/stream-calls.js';
import { compileSchema } from '../../src/protocol/schemas.js';
import { solutionSchema } from '../models/support/solution-schema.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

const validCall = fc.oneof(
  fc.record({ _tool: fc.constant('synth'), sound: fc.string({ maxLength: 4 }) }),
  fc.record({ _tool: fc.constant('mix'), tracks: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }) }),
);
const invalidCall = fc.oneof(
  fc.constant<unknown>({ _tool: 'synth' }),
  fc.constant<unknown>({ _tool: 'unknown', x: 1 }),
  fc.constant<unknown>({ _tool: 'mix', tracks: 'a' }),
  fc.jsonValue({ maxDepth: 1 }),
);
const answer = fc.record({
  calls: fc.array(fc.oneof({ weight: 4, arbitrary: validCall }, { weight: 1, arbitrary: invalidCall }), { maxLength: 5 }),
  output: fc.constantFrom<unknown>(null, 'done', 42),
  outputFirst: fc.boolean(),
  preamble: fc.constantFrom('', 'Here: ', '```json\n'),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
});

const validateSolution = compileSchema(solutionSchema);
const validateCall = compileSchema({ ...solutionSchema, required: [], properties: { calls: solutionSchema.properties.calls } });

describe('StreamedCalls (property)', () => {
  it('delivers early only calls whose prefix is valid, and every call of a valid answer exactly once', () => {
    fc.assert(
      fc.property(answer, ({ calls, output, outputFirst, preamble, cuts }) => {
        const solution = { calls, output };
        const body = outputFirst ? `{"output":${JSON.stringify(output)},"calls":${JSON.stringify(calls)}}` : JSON.stringify(solution);
        const text = preamble + body;
        const delivered: number[] = [];
        const request: ModelRequest = {
          requestName: 'r',
          step: 0,
          messages: [],
          schema: solutionSchema,
          config: {},
          onCall: (call, index) => {
            expect(call).toEqual(calls[index]);
            delivered.push(index);
          },
        };
        const streamed = new StreamedCalls(request);
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((left, right) => left - right);
        let from = 0;
        for (const point of [...points, text.length]) {
          streamed.push(text.slice(from, point));
          from = point;
        }
        for (const index of delivered) {
          // Every call up to this one validates against its tool schema...
          expect(validateCall({ calls: calls.slice(0, index + 1) })).toBe(true);
          // ...and an output written before the calls was valid.
          if (outputFirst) expect(output === null || typeof output === 'string').toBe(true);
        }
        streamed.finish(solution);
        expect(new Set(delivered).size).toBe(delivered.length);
        if (validateSolution(solution)) expect(delivered.sort((a, b) => a - b)).toEqual(calls.map((_, index) => index));
      }),
      settings,
    );
  });
});
