/** Property tests of toJsonData (TOOL-20, TRACE-13): JSON passes unchanged, anything else is found exactly where it is. */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pointerSegment } from '../../src/protocol/json.js';
import { NotJsonError, notJsonPlaceholder, toJsonData } from '../../src/protocol/json-data.js';
import { fcOptions } from '../helpers/fc-options.js';

const config = fcOptions(100);

/** A value JSON cannot hold, and where below it the problem is reported. */
interface Odd {
  label: string;
  make: () => unknown;
  below: string;
}

const circular = (): unknown => {
  const object: Record<string, unknown> = { name: 'loop' };
  object.self = object;
  return object;
};

const odds: Odd[] = [
  { label: 'BigInt', make: () => 7n, below: '' },
  { label: 'Symbol', make: () => Symbol('s'), below: '' },
  { label: 'function', make: () => () => 1, below: '' },
  { label: 'NaN', make: () => Number.NaN, below: '' },
  { label: '-Infinity', make: () => Number.NEGATIVE_INFINITY, below: '' },
  { label: 'Map', make: () => new Map([[1, 2]]), below: '' },
  { label: 'Set', make: () => new Set([1]), below: '' },
  { label: 'cycle', make: circular, below: '/self' },
  { label: 'undefined in an array', make: () => [1, undefined], below: '/1' },
  {
    label: 'throwing getter',
    make: () => ({
      fine: 1,
      get boom(): never {
        throw new Error('getter exploded');
      },
    }),
    below: '/boom',
  },
  {
    label: 'throwing toJSON',
    make: () => ({
      toJSON(): never {
        throw new Error('toJSON exploded');
      },
    }),
    below: '',
  },
  {
    label: 'throwing proxy',
    make: () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error('trap exploded');
          },
        },
      ),
    below: '',
  },
];

const segment = fc.oneof(
  fc.string({ maxLength: 6 }).filter((key) => key !== 'toJSON'),
  fc.nat({ max: 3 }),
);
const siblings = fc.dictionary(
  fc.string({ maxLength: 6 }).filter((key) => key !== 'toJSON'),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

/** A JSON value with `inner` placed at `path`, everything else JSON. */
function placeAt(path: (string | number)[], inner: unknown, fill: Record<string, unknown>[]): unknown {
  let value = inner;
  for (let index = path.length - 1; index >= 0; index--) {
    const step = path[index] as string | number;
    const others = fill[index] ?? {};
    if (typeof step === 'number') value = [...Object.values(others).slice(0, step), ...Array(Math.max(0, step - Object.keys(others).length)).fill(null), value];
    else value = { ...Object.fromEntries(Object.entries(others).filter(([key]) => key !== step)), [step]: value };
  }
  return value;
}

describe('toJsonData', () => {
  it('returns every JSON value unchanged, as a copy sharing nothing with it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = toJsonData(value);
        expect(isDeepStrictEqual(copy, value)).toBe(true);
        if (typeof value === 'object' && value !== null) expect(copy).not.toBe(value);
      }),
      config,
    );
  });

  it('refuses a value that is not JSON with the exact pointer of its one odd part; with replace it never throws and round-trips as JSON', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), fc.constantFrom(...odds), fc.array(siblings, { minLength: 5, maxLength: 5 }), (path, odd, fill) => {
        const value = placeAt(path, odd.make(), fill);
        const expected = `${path.map((step) => `/${pointerSegment(step)}`).join('')}${odd.below}`;
        let thrown: unknown;
        try {
          toJsonData(value);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(NotJsonError);
        expect((thrown as NotJsonError).pointer).toBe(expected);

        const replaced: string[] = [];
        const safe = toJsonData(value, {
          replace: (notJson) => {
            replaced.push(notJson.pointer);
            return notJsonPlaceholder(notJson);
          },
        });
        expect(replaced).toEqual([expected]);
        expect(isDeepStrictEqual(JSON.parse(JSON.stringify(safe)), safe)).toBe(true);
      }),
      config,
    );
  });
});
