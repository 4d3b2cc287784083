/** Property tests of variables: resolution order, instance isolation, immutability and reference round trips. */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import type { Message, OutputMethod } from '../../src/protocol/types.js';
import { applyWrite, foldRecords, readAt, readPath, viewOf, visibleRecords, type DataRecord } from '../../src/protocol/variables/data-records.js';
import {
  findReferences,
  formatPath,
  formatReference,
  parseExpression,
  parsePath,
  parseReference,
  type PathSegment,
} from '../../src/protocol/variables/references.js';
import { resolveValue } from '../../src/protocol/context/resolve-references.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(100);

const KINDS = ['state', 'data', 'input'] as const;
const INSTANCES = [undefined, 'i1', 'i2'] as const;
const METHODS: OutputMethod[] = ['set', 'merge', 'assign', 'push', 'concat'];
const WRITE_PATHS = ['', 'a', 'a.b', 'a.b.c', 'b', 'items', 'items[0]', 'items[1].id', 'a[0]', 'a.items'];
const READ_PATHS = [...WRITE_PATHS, 'a.b.c.d', 'b.a', 'items[0].id', 'items[2]', 'a.b[0]', '["0"]', 'c'];

const pathOf = (text: string): readonly PathSegment[] => {
  const path = parsePath(text);
  if (!path) throw new Error(`test path ${text} does not parse`);
  return path;
};

/** JSON values whose objects often reuse the keys of the paths above, so writes interact. */
const valueArbitrary: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 1 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'id', 'items', '0'), tie('value'), { maxKeys: 3 }),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
})).value;

const recordArbitrary = (instances: readonly (string | undefined)[], value: fc.Arbitrary<unknown> = valueArbitrary): fc.Arbitrary<DataRecord> =>
  fc
    .record({
      kind: fc.constantFrom(...KINDS),
      path: fc.constantFrom(...WRITE_PATHS),
      method: fc.constantFrom(...METHODS),
      value,
      instance: fc.constantFrom(...instances),
    })
    .map(({ kind, path, method, value: written, instance }) => ({
      kind,
      path: pathOf(path),
      method,
      value: written,
      ...(instance !== undefined ? { instance } : {}),
    }));

const historyArbitrary = fc.array(recordArbitrary(INSTANCES), { maxLength: 25 });

describe('readPath', () => {
  it('equals reading the path from the fold of the visible records', () => {
    fc.assert(
      fc.property(
        historyArbitrary,
        fc.constantFrom(...KINDS),
        fc.constantFrom(...INSTANCES),
        fc.constantFrom(...READ_PATHS),
        (records, kind, instance, text) => {
          const path = pathOf(text);
          const expected = readAt(foldRecords(visibleRecords(records, kind, instance)), path);
          return isDeepStrictEqual(readPath(records, kind, instance, path), expected);
        },
      ),
      config,
    );
  });

  it('gives the same view as the fold for every kind and instance', () => {
    fc.assert(
      fc.property(historyArbitrary, (records) =>
        KINDS.every((kind) =>
          INSTANCES.every((instance) => isDeepStrictEqual(viewOf(records, kind, instance), readAt(foldRecords(visibleRecords(records, kind, instance)), []))),
        ),
      ),
      config,
    );
  });
});

describe('ContextStore reads (VAR-15, PLAN-9)', () => {
  /** The data message that holds a record, as a write appends it. */
  const messageOf = (record: DataRecord): Message => ({
    type: 'data',
    kind: record.kind,
    data: record.value,
    _path: formatPath(record.path),
    _outputMethod: record.method,
    ...(record.instance === undefined ? {} : { _instance: record.instance }),
  });

  it('reads from its index by path exactly what readPath reads from all the records', () => {
    fc.assert(
      fc.property(historyArbitrary, (records) => {
        const store = new ContextStore(records.map(messageOf));
        return KINDS.every((kind) =>
          INSTANCES.every((instance) =>
            READ_PATHS.every((text) => {
              const path = pathOf(text);
              return isDeepStrictEqual(store.read({ kind, segments: [...path], path: text, text }, instance), readPath(records, kind, instance, path));
            }),
          ),
        );
      }),
      config,
    );
  });
});

describe('instance isolation', () => {
  const MARKER = 'marker-written-only-by-i2';
  const unmarked = valueArbitrary.filter((value) => !JSON.stringify(value ?? null).includes(MARKER));

  it('never lets a read for i1 (or for no instance) return a value written only with instance i2', () => {
    const history = fc.array(
      fc.oneof(
        recordArbitrary([undefined, 'i1'], unmarked),
        recordArbitrary(['i2'], fc.oneof(fc.constant(MARKER), fc.constant({ a: MARKER, items: [MARKER] }), fc.constant([MARKER]))),
      ),
      { maxLength: 25 },
    );
    fc.assert(
      fc.property(history, (records) =>
        KINDS.every((kind) =>
          [undefined, 'i1'].every((instance) =>
            READ_PATHS.every((text) => !JSON.stringify(readPath(records, kind, instance, pathOf(text)).value ?? null).includes(MARKER)),
          ),
        ),
      ),
      config,
    );
  });

  it('gives an instance the same reads whatever another instance writes', () => {
    fc.assert(
      fc.property(historyArbitrary, fc.constantFrom(...KINDS), fc.constantFrom(...READ_PATHS), (records, kind, text) => {
        const path = pathOf(text);
        const withoutI2 = records.filter((record) => record.instance !== 'i2');
        return isDeepStrictEqual(readPath(records, kind, 'i1', path), readPath(withoutI2, kind, 'i1', path));
      }),
      config,
    );
  });
});

/** Freezes a value deeply, so any mutation throws in strict-mode code. */
const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
};

describe('immutability', () => {
  it('applyWrite never mutates the state or the value', () => {
    fc.assert(
      fc.property(valueArbitrary, fc.constantFrom(...WRITE_PATHS), fc.constantFrom(...METHODS), valueArbitrary, (state, text, method, value) => {
        const before = JSON.stringify([state, value]);
        applyWrite(deepFreeze(state), pathOf(text), method, deepFreeze(value));
        return JSON.stringify([state, value]) === before;
      }),
      config,
    );
  });

  it('resolveValue never mutates its input and returns values without references unchanged', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const before = JSON.stringify(value);
        const result = resolveValue(deepFreeze(value), () => ({ found: true, value: 1 }));
        const hasSigil = before.includes('†');
        return JSON.stringify(value) === before && (hasSigil || (result.status === 'resolved' && JSON.stringify(result.value) === before));
      }),
      config,
    );
  });
});

const kindArbitrary = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/);
/**
 * Keys the syntax always expresses: words, spaces, dots, digits, double quotes and some symbols.
 * (jsonpath-plus splits some other keys, such as `(")` or `~@~`, differently; those are refused,
 * which the next property checks for arbitrary strings.)
 */
const expressibleKey = fc.stringMatching(/^[A-Za-z0-9_ .\-$é"*|&†]{0,6}$/);
const segmentArbitrary = fc.oneof(fc.nat({ max: 10_000 }), expressibleKey);
const segmentsArbitrary = fc.array(segmentArbitrary, { maxLength: 5 });

describe('reference round trip', () => {
  it('parses a formatted reference back to the same kind, segments and text', () => {
    fc.assert(
      fc.property(kindArbitrary, segmentsArbitrary, (kind, segments) => {
        const text = formatReference(kind, segments);
        const reference = parseReference(text);
        return reference !== undefined && reference.kind === kind && isDeepStrictEqual(reference.segments, segments) && reference.text === text;
      }),
      config,
    );
  });

  it('either formats any key so that it parses back, or refuses it with a RangeError', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(), fc.string()), { maxLength: 4 }), (segments) => {
        let path: string;
        try {
          path = formatPath(segments);
        } catch (error) {
          return error instanceof RangeError;
        }
        return isDeepStrictEqual(parsePath(path), segments);
      }),
      config,
    );
  });

  it('formats a parsed reference canonically, and the canonical text is stable', () => {
    fc.assert(
      fc.property(kindArbitrary, segmentsArbitrary, (kind, segments) => {
        const canonical = formatReference(kind, segments);
        const reparsed = parseReference(canonical)!;
        return formatReference(reparsed.kind, reparsed.segments) === canonical;
      }),
      config,
    );
  });

  it('finds formatted references embedded in templates and joined into expressions', () => {
    const referencesArbitrary = fc.array(
      fc.tuple(kindArbitrary, segmentsArbitrary).map(([kind, segments]) => formatReference(kind, segments)),
      { minLength: 2, maxLength: 4 },
    );
    fc.assert(
      fc.property(referencesArbitrary, fc.constantFrom(' || ', '&&', ' && '), (texts, operator) => {
        const template = `Compare ${texts.join(' with ')}, please.`;
        const found = findReferences(template).map((reference) => reference.text);
        const expression = parseExpression(texts.join(operator));
        return (
          isDeepStrictEqual(found, texts) &&
          expression !== undefined &&
          expression.op === (operator.includes('||') ? 'or' : 'and') &&
          isDeepStrictEqual(
            expression.refs.map((reference) => reference.text),
            texts,
          )
        );
      }),
      config,
    );
  });
});
