/** Property tests of the MCP client's bounds (MCP-20, MCP-22): a server's lines cut anywhere read the same, a line past the bound fails only the call it answers, and every tool name is offered under one a provider accepts. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedLineReader } from '../../src/mcp/bounded-line-reader.js';
import { offeredToolNames, PROVIDER_TOOL_NAME } from '../../src/mcp/mcp-tools.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(200);

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

describe('tool names (MCP-22)', () => {
  const prefix = fc.stringMatching(/^[A-Za-z0-9_-]{0,32}$/);

  it('are offered under names every provider accepts, one per name, the same each time; an accepted name is kept', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[a-z_]{1,8}$/)), { maxLength: 30 }), prefix, (names, before) => {
        const offered = offeredToolNames(names, before);
        const distinct = [...new Set(names)];
        expect(new Set(distinct.map((name) => offered.get(name))).size).toBe(distinct.length);
        for (const name of distinct) {
          const given = offered.get(name) as string;
          expect(given).toMatch(PROVIDER_TOOL_NAME);
          if (PROVIDER_TOOL_NAME.test(before + name)) expect(given).toBe(before + name);
        }
        expect(offeredToolNames(names, before)).toEqual(offered);
      }),
      config,
    );
  });

  it('a safe name taken by a listed one moves aside', () => {
    const offered = offeredToolNames(['a b', 'a_b_c8687a08'], '');
    expect(offered.get('a_b_c8687a08')).toBe('a_b_c8687a08');
    expect(offered.get('a b')).toBe('a_b_c8687a08_2');
  });
});
