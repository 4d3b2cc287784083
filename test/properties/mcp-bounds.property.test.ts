/** Property tests of the MCP client's bounds (MCP-20): a server's lines cut anywhere read the same, and a line past the bound fails only the call it answers. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedLineReader } from '../../src/mcp/bounded-line-reader.js';

/** Fixed seed so CI is deterministic; override with FC_SEED / FC_NUM_RUNS to explore. */
const config = { seed: Number(process.env.FC_SEED ?? 42), numRuns: Number(process.env.FC_NUM_RUNS ?? 200) };

/** A message of a server: an answer (its id first or last, a number or a string) or a notification. */
const message = fc.oneof(
  fc
    .record({ id: fc.oneof(fc.nat(), fc.string({ maxLength: 6 })), text: fc.string({ maxLength: 300 }), idFirst: fc.boolean() })
    .map(({ id, text, idFirst }) =>
      idFirst
        ? { jsonrpc: '2.0' as const, id, result: { content: [{ type: 'text', text, id: 'not this one' }] } }
        : { result: { content: [{ type: 'text', text, method: 'not one' }] }, jsonrpc: '2.0' as const, id },
    ),
  fc.string({ maxLength: 300 }).map((text) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: text, id: 7 } })),
);

/** Reads every message `reader` holds: a message, or the error it throws. */
function drain(reader: BoundedLineReader): unknown[] {
  const read: unknown[] = [];
  for (;;) {
    try {
      const next = reader.readMessage();
      if (next === null) return read;
      read.push(next);
    } catch (error) {
      read.push(error);
    }
  }
}

describe("a stdio server's lines, bounded (MCP-20)", () => {
  it('read the same however they are cut; a line past the bound is an error answer for its call naming its size, or dropped', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.integer({ min: 60, max: 400 }), fc.array(fc.nat(), { maxLength: 10 }), (messages, limit, cuts) => {
        const lines = messages.map((each) => Buffer.from(`${JSON.stringify(each)}\n`));
        const bytes = Buffer.concat(lines);
        const reader = new BoundedLineReader(limit);
        const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((left, right) => left - right);
        let from = 0;
        for (const cut of [...at, bytes.length]) {
          reader.append(bytes.subarray(from, cut));
          from = cut;
        }
        const read = drain(reader);
        expect(read).toHaveLength(messages.length);
        for (const [index, each] of messages.entries()) {
          const size = (lines[index] as Buffer).length - 1;
          if (size <= limit) expect(read[index]).toEqual(each);
          else if ('method' in each) expect(read[index]).toBeInstanceOf(Error);
          else
            expect(read[index]).toEqual({
              jsonrpc: '2.0',
              id: each.id,
              error: { code: -32603, message: expect.stringContaining(`is ${size.toLocaleString('en-US')} bytes, more than the limit of`) },
            });
        }
      }),
      config,
    );
  });
});
