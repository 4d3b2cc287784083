/** Names found in a catalog (DEL-21): the Requests of the root folder, or of a parent's server, that a `_delegate` name stands for. */
import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJson } from '../protocol/json.js';
import { isJsonObject } from '../protocol/types.js';
import { listDocumentPaths, statConfinedDocuments } from '../server/confined-folder.js';
import { DocumentCache } from '../server/document-cache.js';
import type { CatalogEntry } from './resolver.js';

/** The largest document read to learn its `meta.name`; larger files are known by their file name only. */
export const MAX_NAMED_DOCUMENT_BYTES = 1024 * 1024;

/** What a catalog holds for one name: the references of the Requests it names (more than one is ambiguous), and every name the catalog has. */
export interface CatalogMatch {
  /** The matching Requests' references: `./<path>` below the root, or a catalog entry's absolute URL. */
  references: string[];
  /** The catalog's names, sorted (file names without `.json`, and `meta.name`s read), for a not-found message. */
  names: string[];
}

/** A file or URL path's last segment without `.json`: the name its place gives a Request. */
function nameByPlace(path: string): string {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last.endsWith('.json') ? last.slice(0, -'.json'.length) : last;
}

/** The `meta.name` of a document file, when it is small enough, JSON, and says one. */
async function metaNameOf(file: string): Promise<string | undefined> {
  try {
    if ((await stat(file)).size > MAX_NAMED_DOCUMENT_BYTES) return undefined;
    const parsed = parseJson(await readFile(file, 'utf8'));
    if (!parsed.ok || !isJsonObject(parsed.value) || !isJsonObject(parsed.value.meta)) return undefined;
    const name = parsed.value.meta.name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    // A file that vanished or cannot be read names nothing; resolving a candidate reports its own failure.
    return undefined;
  }
}

/** The `meta.name`s read, by file and its version (SERVE-11's cache): an unchanged document is not read again for the next name. */
const metaNames = new DocumentCache<string | undefined>();

/** The `meta.name` of the document at `file`, read only when its `version` is not the one read last. */
async function cachedMetaNameOf(file: string, version: string): Promise<string | undefined> {
  const cached = metaNames.get(file, version);
  if (cached !== undefined) return cached.answer;
  const name = await metaNameOf(file);
  metaNames.set(file, { version, size: file.length + (name?.length ?? 0), answer: name });
  return name;
}

/**
 * The Requests below `root` that `name` names (DEL-21): each `.json` document a `delegate-serve`
 * of the folder could list (SERVE-4, SERVE-6: the same listing, dot-names skipped, confined to the
 * real root) whose file name without `.json`, or whose `meta.name`, is `name`. A document reached
 * by two paths (a symbolic link) counts once. A `meta.name` is read only from a document a
 * server could serve, and once per version of its file.
 */
export async function namedInFolder(root: string, name: string): Promise<CatalogMatch> {
  const references: string[] = [];
  const seen = new Set<string>();
  const names = new Set<string>();
  const documents = await listDocumentPaths(root);
  // A file that cannot be looked at names nothing by its meta.name; resolving a candidate reports its own failure.
  const versions = statConfinedDocuments(root, documents).map((version) => version.catch(() => undefined));
  for (const [index, segments] of documents.entries()) {
    const path = segments.join('/');
    const file = join(root, ...segments);
    const byPlace = nameByPlace(path);
    names.add(byPlace);
    const version = await versions[index];
    const named = byPlace === name || version === undefined ? undefined : await cachedMetaNameOf(file, version);
    if (named !== undefined) names.add(named);
    if (byPlace !== name && named !== name) continue;
    const real = await realpath(file).catch(() => file);
    if (seen.has(real)) continue;
    seen.add(real);
    references.push(`./${path}`);
  }
  return { references, names: [...names].sort() };
}

/** The entries of a server's catalog (SERVE-4) that `name` names: by their name (DOC-4: `meta.name`, else the file name) or their file name. */
export function namedInCatalog(entries: readonly CatalogEntry[], name: string): CatalogMatch {
  const references = [
    ...new Set(entries.filter((entry) => entry.name === name || nameByPlace(new URL(entry.reference).pathname) === name).map((entry) => entry.reference)),
  ];
  return { references, names: [...new Set(entries.map((entry) => entry.name))].sort() };
}
