/** The document cache of `delegate-serve` (SERVE-11): good only for the version it was read from, bounded in entries and bytes. */
import { describe, expect, it } from 'vitest';
import { CACHED_DOCUMENTS, DocumentCache } from '../../src/server/document-cache.js';

const entry = (version: string, size = 10) => ({ version, size, answer: `answer of ${version}` });

describe('DocumentCache', () => {
  it('answers only for the very version it holds', () => {
    const cache = new DocumentCache<string>();
    cache.set('/a.json', entry('v1'));
    expect(cache.has('/a.json')).toBe(true);
    expect(cache.get('/a.json', 'v1')?.answer).toBe('answer of v1');
    expect(cache.get('/a.json', 'v2')).toBeUndefined();
    expect(cache.get('/b.json', 'v1')).toBeUndefined();
    cache.set('/a.json', entry('v2'));
    expect(cache.get('/a.json', 'v1')).toBeUndefined();
    expect(cache.get('/a.json', 'v2')?.answer).toBe('answer of v2');
    expect(cache.size).toBe(1);
    cache.delete('/a.json');
    expect(cache.has('/a.json')).toBe(false);
  });

  it('forgets the least recently used document beyond its count', () => {
    const cache = new DocumentCache<string>(2);
    cache.set('/a.json', entry('a'));
    cache.set('/b.json', entry('b'));
    cache.get('/a.json', 'a');
    cache.set('/c.json', entry('c'));
    expect(cache.has('/a.json')).toBe(true);
    expect(cache.has('/b.json')).toBe(false);
    expect(cache.has('/c.json')).toBe(true);
  });

  it('keeps the bytes it holds under its bound, and never holds a document larger than it', () => {
    const cache = new DocumentCache<string>(100, 25);
    cache.set('/a.json', entry('a', 10));
    cache.set('/b.json', entry('b', 10));
    cache.set('/c.json', entry('c', 10));
    expect([cache.has('/a.json'), cache.has('/b.json'), cache.has('/c.json')]).toEqual([false, true, true]);
    cache.set('/big.json', entry('big', 26));
    expect(cache.has('/big.json')).toBe(false);
    // Replacing a path frees its old bytes first.
    cache.set('/b.json', entry('b2', 15));
    expect([cache.has('/b.json'), cache.has('/c.json')]).toEqual([true, true]);
    cache.set('/d.json', entry('d', 1));
    expect([cache.has('/b.json'), cache.has('/c.json'), cache.has('/d.json')]).toEqual([true, false, true]);
  });

  it('remembers 4,096 documents by default, as SERVE-9 says', () => {
    expect(CACHED_DOCUMENTS).toBe(4096);
    const cache = new DocumentCache<string>();
    for (let index = 0; index <= CACHED_DOCUMENTS; index++) cache.set(`/${index}.json`, entry(String(index), 1));
    expect(cache.size).toBe(CACHED_DOCUMENTS);
    expect(cache.has('/0.json')).toBe(false);
    expect(cache.has(`/${CACHED_DOCUMENTS}.json`)).toBe(true);
  });
});
