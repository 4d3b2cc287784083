/** Unit tests of integrity pins: splitting references, digests and mismatch errors. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DelegateError } from '../../src/protocol/errors.js';
import { checkIntegrity, integrityOf, splitIntegrity } from '../../src/resolvers/integrity.js';

describe('integrity pins', () => {
  it('computes subresource-integrity strings of the exact bytes', () => {
    expect(integrityOf('')).toBe('sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
    expect(integrityOf('abc', 'sha512')).toBe(`sha512-${createHash('sha512').update('abc').digest('base64')}`);
  });

  it('splits a pin off the end of a reference', () => {
    const pin = integrityOf('x');
    const split = splitIntegrity(`./a.json#${pin}`);
    expect(split.reference).toBe('./a.json');
    expect(split.pin?.algorithm).toBe('sha256');
    expect(split.pin?.text).toBe(pin);
  });

  it('leaves fragments that are not pins in the reference', () => {
    expect(splitIntegrity('https://h/a.json#section')).toEqual({ reference: 'https://h/a.json#section' });
    expect(splitIntegrity('./a.json')).toEqual({ reference: './a.json' });
  });

  it('understands the URL-safe base64 alphabet', () => {
    const digest = createHash('sha256').update('x').digest();
    expect(splitIntegrity(`a.json#sha256-${digest.toString('base64url')}`).pin?.digest.equals(digest)).toBe(true);
  });

  it('refuses a malformed pin instead of ignoring it', () => {
    for (const reference of [
      'a.json#sha256-',
      'a.json#sha256-abc',
      'a.json#sha256-!!!!',
      `a.json#sha384-${createHash('sha256').update('x').digest('base64')}`,
    ]) {
      expect(() => splitIntegrity(reference), reference).toThrowError(DelegateError);
    }
  });

  it('passes matching bytes and refuses others naming both digests', () => {
    const { pin } = splitIntegrity(`a.json#${integrityOf('good')}`);
    expect(() => checkIntegrity('good', pin, 'a.json', '/root/a.json')).not.toThrow();
    expect(() => checkIntegrity('anything', undefined, 'a.json', '/root/a.json')).not.toThrow();
    try {
      checkIntegrity('evil', pin, 'a.json', '/root/a.json');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DelegateError);
      expect((error as DelegateError).code).toBe('delegate_forbidden');
      expect((error as DelegateError).message).toContain(integrityOf('good'));
      expect((error as DelegateError).message).toContain(integrityOf('evil'));
    }
  });
});
