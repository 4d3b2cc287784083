/** Unit tests of src/protocol/variables/reference-index.ts: which registered references overlap a given one (VAR-17), by scope. */
import { describe, expect, it } from 'vitest';
import { ReferenceIndex, ScopedReferenceIndex } from '../../src/protocol/variables/reference-index.js';
import { parseReference, type Reference } from '../../src/protocol/variables/references.js';

const ref = (text: string) => parseReference(text) as Reference;

function overlapping(index: ReferenceIndex<string>, text: string): string[] {
  const found: string[] = [];
  index.forEachOverlapping(ref(text), (item) => found.push(item));
  return found.sort();
}

describe('ReferenceIndex', () => {
  const index = new ReferenceIndex<string>();
  for (const text of ['†state', '†state.a', '†state.a.b', '†state.a.c', '†state.ab', '†input.a', '†state.list[0]', '†state.list[1].id'])
    index.add(ref(text), text);

  it('finds the references at a prefix of the path, the path itself and below it, of the same kind only', () => {
    expect(overlapping(index, '†state.a')).toEqual(['†state', '†state.a', '†state.a.b', '†state.a.c']);
    expect(overlapping(index, '†state.a.b.z')).toEqual(['†state', '†state.a', '†state.a.b']);
    expect(overlapping(index, '†input')).toEqual(['†input.a']);
    expect(overlapping(index, '†other.a')).toEqual([]);
  });

  it('treats an index and the same digits as a key alike', () => {
    expect(overlapping(index, '†state.list.0')).toEqual(['†state', '†state.list[0]']);
    expect(overlapping(index, '†state.list')).toEqual(['†state', '†state.list[0]', '†state.list[1].id']);
  });

  it('forgets one registration per delete, and nothing for a reference it does not hold', () => {
    const counted = new ReferenceIndex<string>();
    counted.add(ref('†state.x'), 'twice');
    counted.add(ref('†state.x'), 'twice');
    counted.add(ref('†state.x.y'), 'below');
    counted.delete(ref('†state.x'), 'twice');
    expect(overlapping(counted, '†state.x')).toEqual(['below', 'twice']);
    counted.delete(ref('†state.x'), 'twice');
    counted.delete(ref('†state.x'), 'twice');
    counted.delete(ref('†state.nothing'), 'below');
    expect(overlapping(counted, '†state')).toEqual(['below']);
    counted.delete(ref('†state.x.y'), 'below');
    expect(overlapping(counted, '†state')).toEqual([]);
  });
});

describe('ScopedReferenceIndex', () => {
  it('answers for one scope, or for every scope', () => {
    const index = new ScopedReferenceIndex<string>();
    index.add(ref('†state.x'), undefined, 'global');
    index.add(ref('†state.x'), 'fr', 'french');
    index.add(ref('†state.x.y'), null, 'none');
    const inScope = (scope: unknown) => {
      const found: string[] = [];
      index.forEachIn(ref('†state.x'), scope, (item) => found.push(item));
      return found;
    };
    expect(inScope(undefined)).toEqual(['global']);
    expect(inScope('fr')).toEqual(['french']);
    expect(inScope(null)).toEqual(['none']);
    expect(inScope('de')).toEqual([]);
    const all: string[] = [];
    index.forEachInAny(ref('†state'), (item) => all.push(item));
    expect(all.sort()).toEqual(['french', 'global', 'none']);
    index.delete(ref('†state.x'), 'fr', 'french');
    expect(inScope('fr')).toEqual([]);
  });
});
