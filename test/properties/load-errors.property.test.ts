import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { RequestError } from '../../src/protocol/errors.js';
import { atPointer } from '../../src/protocol/json.js';
import { validateRequest } from '../../src/protocol/messages/load-request.js';
import { fcOptions } from '../helpers/fc-options.js';

const settings = fcOptions(200);
const handlers = defaultHandlers();

const valid = {
  meta: { name: 'sample' },
  context: [
    { type: 'system', text: 'Hi.' },
    { type: 'input', schema: { type: 'object', properties: { q: { type: 'string' } } } },
    { type: 'state', state: { n: 1 } },
    { type: 'tool', tool: { t: { properties: { a: { type: 'string' } }, _output: { type: 'string' } } } },
    { type: 'plan', calls: [{ _tool: 't', a: '†input.q', _output: 'x', _outputPath: '†state.r' }] },
  ],
  schema: { type: 'string' },
};

/** A random JSON value to drop in somewhere. */
const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.constantFrom('†', '†state', '†a || †', '†a && †b || †c', 'telepathy', '', '../x.json'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('type', 'text', 'tool', 'calls', 'kind', '_instance', 'schema', 'x'), fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), {
    maxKeys: 3,
  }),
);

/** Every path (as keys) into a value, so a mutation can land anywhere in the document. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const here = [prefix];
  if (typeof value !== 'object' || value === null) return here;
  return here.concat(...Object.keys(value).map((key) => paths((value as Record<string, unknown>)[key], [...prefix, key])));
}

const allPaths = paths(valid).filter((path) => path.length > 0);

function mutate(document: unknown, path: string[], replacement: unknown, remove: boolean): unknown {
  const copy = structuredClone(document) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = replacement;
  return copy;
}

describe('loading bad documents', () => {
  it('either loads or throws a RequestError whose every problem names the file and a pointer into the document', () => {
    // Both outcomes are counted, so a generator that only ever made valid (or only invalid)
    // documents would fail this test instead of passing it vacuously.
    const outcomes = { loaded: 0, refused: 0 };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...allPaths), junk, fc.boolean()), { minLength: 1, maxLength: 3 }), (mutations) => {
        let document: unknown = valid;
        for (const [path, replacement, remove] of mutations) {
          try {
            document = mutate(document, path, replacement, remove);
          } catch {
            // The path no longer exists after an earlier mutation: skip this one.
          }
        }
        try {
          validateRequest(document, 'doc.json', handlers);
          outcomes.loaded++;
        } catch (error) {
          outcomes.refused++;
          expect(error).toBeInstanceOf(RequestError);
          for (const problem of (error as RequestError).problems) {
            expect(problem.document).toBe('doc.json');
            expect(problem.message).toMatch(/\.$/);
            // The pointer names something in the document, or a property that should be there.
            const parent = problem.pointer.replace(/\/[^/]*$/, '');
            expect(atPointer(document, problem.pointer).found || atPointer(document, parent).found).toBe(true);
          }
        }
      }),
      settings,
    );
    expect(outcomes.loaded).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(settings.numRuns / 2);
  });
});
