/** Property test of delegates loaded once per text (spec/delegation.md DEL-29): whatever the order of texts read at each location, the cached load says what a fresh parse says. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { RequestError } from '../../src/protocol/errors.js';
import { parseRequestText } from '../../src/protocol/messages/load-request.js';
import { loadRequestText } from '../../src/resolvers/loaded-request-cache.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(100);

/** Texts a location may hold from one read to the next: valid ones, an invalid one and one that is not JSON. */
const TEXTS = [
  JSON.stringify({ context: [{ type: 'system', text: 'One.' }], schema: { type: 'string' } }),
  JSON.stringify({ meta: { name: 'two' }, context: [{ type: 'system', text: 'Two.' }], schema: true }),
  JSON.stringify({ context: [{ type: 'system' }], schema: { type: 'object' } }),
  '{"context": [',
];
const LOCATIONS = ['/docs/a.json', '/docs/b.json', 'http://127.0.0.1:1/c.json'];

/** What loading says: the document, name and location, or the problems. */
function outcome(load: () => { document: unknown; name: string; location: string }): unknown {
  try {
    const { document, name, location } = load();
    return { document, name, location };
  } catch (error) {
    if (error instanceof RequestError) return { problems: error.problems };
    throw error;
  }
}

describe('delegates loaded once per text (DEL-29)', () => {
  it('gives what a fresh parse gives, for any sequence of reads', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ text: fc.nat(TEXTS.length - 1), at: fc.nat(LOCATIONS.length - 1) }), { maxLength: 30 }), (reads) => {
        const handlers = defaultHandlers();
        for (const { text, at } of reads) {
          const location = LOCATIONS[at] as string;
          const source = TEXTS[text] as string;
          expect(outcome(() => loadRequestText(source, location, handlers))).toEqual(outcome(() => parseRequestText(source, location, handlers)));
        }
      }),
      settings,
    );
  });
});
