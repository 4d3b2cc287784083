/** Property: a catalog path (SERVE-4) is a URL path that leads back to the very document it lists. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isServableName, parseRequestPath, urlPathOf } from '../../src/server/parse-request-path.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(300);

/** Any name a served folder may hold: every Unicode code point, with the characters URLs treat specially over-represented. */
const name = fc
  .array(
    fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), fc.constantFrom(' ', '%', '#', '?', '&', '+', ';', '=', '~', "'", 'é', '🎵', '%20')),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((parts) => parts.join(''))
  .filter(isServableName);

const documentPath = fc.tuple(fc.array(name, { maxLength: 3 }), name).map(([folders, file]) => [...folders, `${file}.json`]);

describe('catalog paths (property)', () => {
  it('parse the URL path of any servable document back into exactly its names', () => {
    fc.assert(
      fc.property(documentPath, (segments) => {
        const path = urlPathOf(segments);
        expect(path).toBeDefined();
        expect(parseRequestPath(path as string)).toEqual({ kind: 'document', segments, path: `/${segments.join('/')}` });
        // What a client sends survives URL parsing unchanged, so the socket layer judges the same path.
        expect(new URL(path as string, 'http://serve.test').pathname).toBe(path);
      }),
      settings,
    );
  });

  it('has no URL path for a name with a lone surrogate, which no request could reach', () => {
    expect(urlPathOf(['\ud800.json'])).toBeUndefined();
  });
});
