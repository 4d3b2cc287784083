/** Turning a URL path into the folder-relative segments of a Request document, refusing anything that could step outside. */

/** What a URL path names: the catalog, one document by its decoded segments, or nothing servable. */
export type RequestPath =
  | { kind: 'catalog' }
  | {
      kind: 'document';
      /** Decoded path segments below the served folder, e.g. `['music', 'producer.json']`. */
      segments: string[];
      /** The decoded path, `/` + segments joined by `/`: how the document is named in answers. */
      path: string;
    }
  | { kind: 'refused' };

/** The file-name suffix of every servable document. */
export const DOCUMENT_SUFFIX = '.json';

// Control characters (including NUL), slashes of either kind, and nothing else, are never part of a
// servable name; a leading dot hides a name (dotfiles, `.`, `..`).
const FORBIDDEN_IN_NAME = /[\u0000-\u001f\u007f/\\]/;

/**
 * True when one decoded path segment may name a file or folder the server exposes: not empty, not
 * starting with a dot (which also rules out `.` and `..`), and free of slashes, backslashes and
 * control characters. The folder walk of the catalog applies the same rule to real names, so the
 * catalog lists exactly what a GET can reach.
 */
export function isServableName(name: string): boolean {
  return name.length > 0 && !name.startsWith('.') && !FORBIDDEN_IN_NAME.test(name);
}

/**
 * The URL path that reaches the document at `segments` (decoded names below the served folder):
 * `/` and each segment percent-encoded, so that `parseRequestPath` gives the segments back, e.g.
 * `['my song.json']` → `/my%20song.json`. `undefined` when a name has no encoding (a lone UTF-16
 * surrogate), which no request could then reach.
 */
export function urlPathOf(segments: readonly string[]): string | undefined {
  try {
    return `/${segments.map(encodeURIComponent).join('/')}`;
  } catch {
    return undefined;
  }
}

/**
 * Parses the path of a request URL (still percent-encoded, without query) into what it names.
 *
 * `/` is the catalog. Anything else must be `/`-separated non-empty segments that each decode
 * (exactly once) to a servable name, the last ending in `.json`. The path is split on raw `/`
 * before decoding, and a segment that decodes to something containing `/` or `\` (from `%2f` or
 * `%5c`) is refused rather than split again: decoding a second time would make `a%2fb.json` and
 * `a/b.json` the same resource and reopen the double-decoding tricks (`%252e%252e`) that one decode
 * closes. A literal `%` in a file name stays reachable as `%25`. Malformed percent-encoding, raw
 * backslashes, empty segments (`//`, a trailing `/`) and NUL are refused too.
 */
export function parseRequestPath(pathname: string): RequestPath {
  if (pathname === '/') return { kind: 'catalog' };
  if (!pathname.startsWith('/') || pathname.includes('\\')) return { kind: 'refused' };
  const segments: string[] = [];
  for (const raw of pathname.slice(1).split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return { kind: 'refused' };
    }
    if (!isServableName(decoded)) return { kind: 'refused' };
    segments.push(decoded);
  }
  const last = segments[segments.length - 1];
  if (last === undefined || !last.endsWith(DOCUMENT_SUFFIX)) return { kind: 'refused' };
  return { kind: 'document', segments, path: `/${segments.join('/')}` };
}
