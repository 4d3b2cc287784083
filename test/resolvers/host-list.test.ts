/** Unit tests of host allow-lists: entry parsing and matching by host and port. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/protocol/errors.js';
import { HostList, parseHostEntry } from '../../src/resolvers/host-list.js';

describe('host lists', () => {
  it('parses host, host:port and IPv6 entries, normalising names', () => {
    expect(parseHostEntry('Example.COM')).toEqual({ host: 'example.com' });
    expect(parseHostEntry('127.0.0.1:8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseHostEntry('[::1]:80')).toEqual({ host: '[::1]', port: 80 });
    expect(parseHostEntry('::1')).toEqual({ host: '[::1]' });
  });

  it('refuses entries that are not hosts', () => {
    for (const entry of ['', 'http://example.com', 'example.com/path', 'example.com:0', 'example.com:99999', 'user@example.com']) {
      expect(() => parseHostEntry(entry), entry).toThrowError(UsageError);
    }
  });

  it('matches a host entry on any port and a host:port entry on that port only', () => {
    const list = new HostList(['example.com', '127.0.0.1:8787']);
    expect(list.matches(new URL('https://example.com/a.json'))).toBe(true);
    expect(list.matches(new URL('http://EXAMPLE.com:9999/a.json'))).toBe(true);
    expect(list.matches(new URL('http://127.0.0.1:8787/a.json'))).toBe(true);
    expect(list.matches(new URL('http://127.0.0.1:8788/a.json'))).toBe(false);
    expect(list.matches(new URL('http://127.0.0.1/a.json'))).toBe(false);
    expect(list.matches(new URL('http://sub.example.com/a.json'))).toBe(false);
  });

  it('uses the default port of the scheme when the URL names none', () => {
    const list = new HostList(['example.com:80', 'secure.example:443']);
    expect(list.matches(new URL('http://example.com/a.json'))).toBe(true);
    expect(list.matches(new URL('https://example.com/a.json'))).toBe(false);
    expect(list.matches(new URL('https://secure.example/a.json'))).toBe(true);
  });
});
