/** Property tests of what crosses the queue (spec/queue.md QUEUE-2, QUEUE-5): a child's result survives the trip as JSON, and stream ids order events as Redis does. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError, type ErrorCode } from '../../src/protocol/errors.js';
import type { RunResult } from '../../src/protocol/contracts.js';
import { streamIdReached } from '../../src/queue/queue-keys.js';
import { resultFromJson, resultToJson } from '../../src/queue/run-result-json.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(200);

const CODES: ErrorCode[] = ['worker_error', 'budget_exceeded', 'cancelled_by_user', 'model_error', 'max_depth_exceeded', 'invalid_request'];

const usage = fc.record({
  inputTokens: fc.nat(),
  outputTokens: fc.nat(),
  cacheReadTokens: fc.nat(),
  cacheWriteTokens: fc.nat(),
  costUsd: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 100, noNaN: true })),
  steps: fc.nat(),
  toolCalls: fc.nat(),
  ms: fc.nat(),
});

const result: fc.Arbitrary<RunResult> = fc.oneof(
  fc.record({ ok: fc.constant(true as const), run: fc.string(), output: fc.jsonValue(), usage, usageTotal: usage }),
  fc.record({
    ok: fc.constant(false as const),
    run: fc.string(),
    error: fc
      .tuple(
        fc.constantFrom(...CODES),
        fc.string(),
        fc.dictionary(
          fc.string().filter((key) => key !== 'code' && key !== 'message' && key !== '__proto__'),
          fc.jsonValue(),
        ),
      )
      .map(([code, message, data]) => new ProtocolError(code, message, data)),
    usage,
    usageTotal: usage,
  }),
);

describe('what crosses the queue', () => {
  it('gives back a result equal to the one sent through JSON, its error of the same code, message and data (QUEUE-2)', () => {
    fc.assert(
      fc.property(result, (sent) => {
        const received = resultFromJson(JSON.parse(JSON.stringify(resultToJson(sent))));
        expect(received.ok).toBe(sent.ok);
        expect(received.usageTotal).toEqual(JSON.parse(JSON.stringify(sent.usageTotal)));
        if (sent.ok && received.ok) expect(received.output).toEqual(JSON.parse(JSON.stringify(sent.output ?? null)));
        if (!sent.ok && !received.ok) {
          expect(received.error).toBeInstanceOf(ProtocolError);
          expect(received.error.toJSON()).toEqual(JSON.parse(JSON.stringify(sent.error.toJSON())));
        }
      }),
      settings,
    );
  });

  it('orders stream ids as Redis does: by milliseconds, then sequence, beyond 2^53 (QUEUE-5)', () => {
    const id = fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
    fc.assert(
      fc.property(id, id, ([aMs, aSeq], [bMs, bSeq]) => {
        const reached = streamIdReached(`${aMs}-${aSeq}`, `${bMs}-${bSeq}`);
        expect(reached).toBe(aMs > bMs || (aMs === bMs && aSeq >= bSeq));
        // A total order: of two ids, one has reached the other.
        expect(reached || streamIdReached(`${bMs}-${bSeq}`, `${aMs}-${aSeq}`)).toBe(true);
      }),
      settings,
    );
  });
});
