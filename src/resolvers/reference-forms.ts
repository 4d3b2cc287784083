/** Small shared helpers that classify delegate references and locations. */
import { isAbsolute, relative, sep } from 'node:path';

/** A scheme of two or more letters (`http:`, `file:`); a single letter is a Windows drive and stays a path (then refused as absolute). */
const SCHEME = /^[a-z][a-z0-9+.-]+:/i;

/** True when the reference starts with a URL scheme such as `http:` or `file:`. */
export function hasScheme(reference: string): boolean {
  return SCHEME.test(reference);
}

/** True for `anonymous` and `anonymous#<pin>`, the anonymous resolver's form. */
export function isAnonymousReference(reference: string): boolean {
  return reference === 'anonymous' || reference.startsWith('anonymous#');
}

/** True when `value` is an absolute `http:` or `https:` URL. */
export function isHttpUrl(value: string | undefined): boolean {
  return value !== undefined && /^https?:\/\//i.test(value);
}

/** True when `child` is `parent` or lies below it (both absolute, normalised paths). */
export function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}

/** Decodes document bytes as UTF-8, dropping a leading byte-order mark. */
export function decodeText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
