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

/** Where an agent card is published below an A2A agent's base URL (A2A's well-known path). */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** An A2A agent named by a `_delegate`: its base URL and the URL of its card. */
export interface A2aLocation {
  /** The agent's base URL, without a trailing slash (the URL an `a2a+` reference names, without `a2a+`). */
  base: string;
  /** Where its agent card is read: `<base>/.well-known/agent-card.json`. */
  card: string;
}

/**
 * True when a `_delegate` names an A2A agent (DEL-31): `a2a+http://…` or `a2a+https://…` (the
 * agent's base URL), or an absolute `http(s)` URL whose path ends in `/.well-known/agent-card.json`
 * (its card).
 */
export function isA2aReference(reference: string): boolean {
  if (/^a2a\+https?:\/\//i.test(reference)) return true;
  if (!/^https?:\/\//i.test(reference)) return false;
  const path = reference.replace(/[?#].*$/s, '');
  return path.endsWith(AGENT_CARD_PATH);
}

/**
 * The base URL and card URL of an A2A reference (DEL-31). Returns `undefined` when the text after
 * `a2a+` is not a URL; the caller refuses it with `delegate_not_found`.
 */
export function a2aLocation(reference: string): A2aLocation | undefined {
  const plain = reference.replace(/^a2a\+/i, '');
  let url: URL;
  try {
    url = new URL(plain);
  } catch {
    return undefined;
  }
  url.hash = '';
  url.search = '';
  if (url.pathname.endsWith(AGENT_CARD_PATH)) {
    const card = url.href;
    url.pathname = url.pathname.slice(0, -AGENT_CARD_PATH.length);
    return { base: url.href.replace(/\/$/, ''), card };
  }
  const base = url.href.replace(/\/$/, '');
  return { base, card: `${base}${AGENT_CARD_PATH}` };
}
