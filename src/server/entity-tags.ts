/** Entity tags for conditional requests: a strong tag from the bytes and `If-None-Match` matching (RFC 9110 section 13.1.2). */
import { createHash } from 'node:crypto';

/** A strong entity tag for `bytes`: the quoted base64url SHA-256 of exactly what is served. */
export function entityTag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/**
 * True when an `If-None-Match` header value matches `tag`, so a GET or HEAD answers `304`.
 * Accepts `*` and comma-separated lists; compares weakly, as RFC 9110 requires for this header
 * (`W/"x"` matches `"x"`). Malformed members are skipped, never matched.
 */
export function ifNoneMatchMatches(header: string | null, tag: string): boolean {
  if (header === null) return false;
  const wanted = opaqueTag(tag);
  let index = 0;
  while (index < header.length) {
    const character = header[index];
    if (character === ',' || character === ' ' || character === '\t') {
      index++;
      continue;
    }
    if (character === '*') return true;
    const start = header.startsWith('W/', index) ? index + 2 : index;
    if (header[start] !== '"') {
      // Not an entity-tag: skip to the next list member.
      const comma = header.indexOf(',', index);
      index = comma < 0 ? header.length : comma + 1;
      continue;
    }
    // Commas are legal inside an opaque tag, so a tag ends at its closing quote, not at a comma.
    const end = header.indexOf('"', start + 1);
    if (end < 0) return false;
    if (header.slice(start, end + 1) === wanted) return true;
    index = end + 1;
  }
  return false;
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
