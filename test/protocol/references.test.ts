/** Unit tests of the reference grammar: references, paths, input expressions and output paths. */
import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH } from '../../src/protocol/json.js';
import {
  findReferences,
  formatPath,
  formatReference,
  makeReference,
  parseExpression,
  parseOutputPath,
  parsePath,
  parseReference,
  validateExpression,
  type Reference,
} from '../../src/protocol/variables/references.js';

const ref = (text: string): Reference => {
  const parsed = parseReference(text);
  if (!parsed) throw new Error(`test reference ${text} does not parse`);
  return parsed;
};

describe('parseReference', () => {
  it('parses a kind with a dotted path', () => {
    expect(parseReference('†input.userName')).toEqual({ kind: 'input', path: 'userName', segments: ['userName'], text: '†input.userName' });
  });

  it('parses array indices as numbers', () => {
    expect(parseReference('†state.items[0].id')).toEqual({ kind: 'state', path: 'items[0].id', segments: ['items', 0, 'id'], text: '†state.items[0].id' });
  });

  it('parses a reference to a whole kind with an empty path', () => {
    expect(parseReference('†output')).toEqual({ kind: 'output', path: '', segments: [], text: '†output' });
  });

  it('parses quoted keys as strings, even when they are digits', () => {
    expect(parseReference('†state.a["x y"]')?.segments).toEqual(['a', 'x y']);
    expect(parseReference("†state.a['x.y']")?.segments).toEqual(['a', 'x.y']);
    expect(parseReference('†state["0"]')).toMatchObject({ path: '["0"]', segments: ['0'] });
  });

  it('reads a digit key after a dot as an index', () => {
    expect(parseReference('†state.items.0')?.segments).toEqual(['items', 0]);
  });

  it('accepts kinds with dashes and underscores and keys in any script', () => {
    expect(parseReference('†user_profile-v2.имя')?.segments).toEqual(['имя']);
    expect(parseReference('†user_profile-v2.имя')?.kind).toBe('user_profile-v2');
  });

  it('rejects text that is not exactly one reference', () => {
    for (const text of [
      'input.userName',
      '†',
      '†1abc',
      '†input.',
      '†input..a',
      '†input[x]',
      '†input[-1]',
      '†input[01]',
      ' †input',
      '†input.a b',
      '†input.a[*]',
      '†input["a]',
      '†input.a || †input.b',
    ]) {
      expect(parseReference(text), text).toBeUndefined();
    }
  });
});

describe('how long a reference path may be (DOC-10)', () => {
  it('reads text with more than MAX_NESTING_DEPTH path segments as no reference', () => {
    expect(parseReference(`†state${'[0]'.repeat(MAX_NESTING_DEPTH)}`)?.segments).toHaveLength(MAX_NESTING_DEPTH);
    expect(parseReference(`†state${'[0]'.repeat(MAX_NESTING_DEPTH + 1)}`)).toBeUndefined();
    expect(findReferences({ x: `†state${'.a'.repeat(10_000)}` })).toEqual([]);
  });
});

describe('parsePath and formatPath', () => {
  it('parses an empty path as the root', () => {
    expect(parsePath('')).toEqual([]);
  });

  it('parses dotted, indexed and quoted paths', () => {
    expect(parsePath('items[0].name')).toEqual(['items', 0, 'name']);
    expect(parsePath('["x y"].a')).toEqual(['x y', 'a']);
    expect(parsePath('[2]')).toEqual([2]);
  });

  it('rejects malformed paths', () => {
    expect(parsePath('.a')).toBeUndefined();
    expect(parsePath('a.')).toBeUndefined();
    expect(parsePath('a[')).toBeUndefined();
  });

  it('parses a path once and shares it frozen, and parses right past the number of paths it remembers', () => {
    const first = parsePath('items[0].name');
    expect(parsePath('items[0].name')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(parsePath('a[')).toBeUndefined();
    for (let n = 0; n < 3000; n++) expect(parsePath(`k${n}[${n}]`)).toEqual([`k${n}`, n]);
    expect(parsePath('items[0].name')).toEqual(['items', 0, 'name']);
    expect(parsePath('a[')).toBeUndefined();
  });

  it('formats plain keys with dots, numbers with brackets and other keys quoted', () => {
    expect(formatPath(['items', 0, 'name'])).toBe('items[0].name');
    expect(formatPath(['x y', '0', 'say "hi"'])).toBe(`["x y"]["0"]['say "hi"']`);
    expect(formatPath([])).toBe('');
  });

  it('refuses keys the syntax cannot express', () => {
    expect(() => formatPath([`it's "x"`])).toThrow(RangeError);
    expect(() => formatPath(['a]b'])).toThrow(RangeError);
    expect(() => formatPath([-1])).toThrow(RangeError);
  });

  it('formats references that parse back to the same kind and segments', () => {
    expect(formatReference('state', ['items', 0, 'id'])).toBe('†state.items[0].id');
    expect(formatReference('output')).toBe('†output');
    expect(formatReference('state', ['x y'])).toBe('†state["x y"]');
    expect(makeReference('state', ['x y', 1])).toEqual({ kind: 'state', path: '["x y"][1]', segments: ['x y', 1], text: '†state["x y"][1]' });
    expect(() => formatReference('1bad')).toThrow(RangeError);
  });
});

describe('parseExpression', () => {
  it('parses a single reference as a ref expression', () => {
    expect(parseExpression('†input.name')).toEqual({ op: 'ref', refs: [ref('†input.name')] });
  });

  it('parses references joined by || as an or expression', () => {
    expect(parseExpression('†input.a || †state.b||†data.c')).toEqual({ op: 'or', refs: [ref('†input.a'), ref('†state.b'), ref('†data.c')] });
  });

  it('parses references joined by && as an and expression', () => {
    expect(parseExpression('†input.a && †state.b')).toEqual({ op: 'and', refs: [ref('†input.a'), ref('†state.b')] });
  });

  it('ignores whitespace around the whole expression', () => {
    expect(parseExpression('  †input.a  ')?.op).toBe('ref');
  });

  it('keeps operators inside quoted keys as part of the key', () => {
    expect(parseExpression('†state["a||b"] || †state.c')?.refs.map((r) => r.segments)).toEqual([['a||b'], ['c']]);
  });

  it('returns undefined for mixed operators, templates, dangling operators and plain strings', () => {
    for (const text of ['†a.x || †b.y && †c.z', 'Hello †input.name!', '†input.name!', '†a.x ||', '|| †a.x', '†a.x || b', 'plain', '']) {
      expect(parseExpression(text), text).toBeUndefined();
    }
  });
});

describe('findReferences', () => {
  it('finds references in nested objects and arrays, in order, without reading keys', () => {
    const params = {
      '†state.key': 'literal',
      a: '†input.a',
      b: ['Hello †input.name, you are †input.age', { c: '†state.x || †state.y' }],
      d: 3,
      e: null,
    };
    expect(findReferences(params).map((r) => r.text)).toEqual(['†input.a', '†input.name', '†input.age', '†state.x', '†state.y']);
  });

  it('finds nothing in values without references', () => {
    expect(findReferences({ a: 'no sigil', b: [1, true, null] })).toEqual([]);
    expect(findReferences('† alone')).toEqual([]);
  });
});

describe('parseOutputPath', () => {
  it('parses one target', () => {
    expect(parseOutputPath('†state.summary')).toEqual({ op: 'ref', targets: [ref('†state.summary')] });
    expect(parseOutputPath('†output')).toEqual({ op: 'ref', targets: [ref('†output')] });
  });

  it('parses alternative outcomes and fan-outs', () => {
    expect(parseOutputPath('†state.approved || †state.rejected')).toEqual({ op: 'or', targets: [ref('†state.approved'), ref('†state.rejected')] });
    expect(parseOutputPath('†state.a && †output.summary')).toEqual({ op: 'and', targets: [ref('†state.a'), ref('†output.summary')] });
  });

  it('returns undefined for anything else', () => {
    expect(parseOutputPath('state.summary')).toBeUndefined();
    expect(parseOutputPath('†a.x || †b.y && †c.z')).toBeUndefined();
  });
});

describe('validateExpression', () => {
  it('accepts well-formed expressions and ignores strings that do not look like expressions', () => {
    expect(validateExpression('†a.x || †b.y', 'input')).toBeUndefined();
    expect(validateExpression('†a.x && †b.y', 'output')).toBeUndefined();
    expect(validateExpression('Hello †input.name || friend', 'input')).toBeUndefined();
    expect(validateExpression('†input.name', 'input')).toBeUndefined();
    expect(validateExpression('plain', 'input')).toBeUndefined();
  });

  it('explains mixed operators in a full sentence', () => {
    const problem = validateExpression('†a.x || †b.y && †c.z', 'input');
    expect(problem).toMatch(/^The input expression ".*" mixes `\|\|` and `&&`; use one operator: .*\.$/);
  });

  it('names a side that is not a reference', () => {
    expect(validateExpression('†a.x || b.y', 'input')).toMatch(/has "b\.y" where a reference/);
    expect(validateExpression('†a.x ||', 'output')).toMatch(/^The output path .* has an empty side where a reference/);
  });

  it('reports an output path that is not a reference at all', () => {
    expect(validateExpression('state.summary', 'output')).toMatch(/^The output path "state\.summary" is not a reference/);
  });

  it('names a reference whose path is longer than MAX_NESTING_DEPTH segments, wherever it is (DOC-10)', () => {
    const long = `†state${'.a'.repeat(MAX_NESTING_DEPTH + 1)}`;
    expect(validateExpression(long, 'output')).toMatch(/has a path of more than 100 segments, the most a reference's path may have\.$/);
    expect(validateExpression(`Hello ${long}`, 'input')).toMatch(/holds a reference whose path has more than 100 segments/);
    expect(validateExpression(`†state.x || ${long}`, 'input')).toMatch(/has a path of more than 100 segments/);
    expect(validateExpression(`†state${'.a'.repeat(MAX_NESTING_DEPTH)}`, 'output')).toBeUndefined();
  });
});
