/** Where `delegate-mcp` finds its Requests (MCP-8, MCP-13): a folder listed as `delegate-serve` lists it, or a `delegate-serve` catalog URL. */
import { type FSWatcher, watch } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { createRequestHandler } from '../server/handler.js';
import type { CatalogEntry } from '../server/validate-document.js';
import type { ListedRequest } from './request-tool.js';

/** How long a folder must be quiet after a change before it is listed again (MCP-13). */
const SETTLE_MS = 100;
/** How often a catalog URL is fetched again to notice a change (MCP-13). */
export const CATALOG_POLL_MS = 5000;

/** A source of Requests: lists them, and says when the list may have changed. */
export interface RequestSource {
  /** The valid Requests, in catalog order (sorted by path). */
  list(): Promise<ListedRequest[]>;
  /** Calls `onChange` whenever the Requests may have changed; returns what stops watching. */
  watch(onChange: () => void): () => void;
}

/** The catalog a `GET /` of delegate-serve answers, checked to be a list of entries. */
function catalogEntries(text: string, where: string): CatalogEntry[] {
  const parsed = parseJson(text);
  if (!parsed.ok || !Array.isArray(parsed.value))
    throw new UsageError(`Expected ${where} to answer a delegate-serve catalog (a JSON list of {path, name, description, input, output}), but it did not.`);
  return (parsed.value as CatalogEntry[]).filter((entry) => typeof entry?.path === 'string' && typeof entry.name === 'string');
}

function entryOf(entry: CatalogEntry): ListedRequest['entry'] {
  return { name: entry.name, description: entry.description ?? null, input: entry.input ?? null, output: entry.output };
}

/**
 * The Requests of a folder: exactly the valid documents `delegate-serve` would list for it (SERVE-4),
 * read through its handler, each run from its file; a change anywhere below the folder is noticed
 * by a file-system watch.
 */
export function folderSource(root: string): RequestSource {
  const handler = createRequestHandler({ root, log: () => undefined });
  return {
    async list() {
      const response = await handler(new Request('http://delegate-mcp.invalid/'));
      return catalogEntries(await response.text(), root).map((entry) => ({
        entry: entryOf(entry),
        reference: join(root, ...entry.path.slice(1).split('/').map(decodeURIComponent)),
      }));
    },
    watch(onChange) {
      let timer: NodeJS.Timeout | undefined;
      let watcher: FSWatcher | undefined;
      try {
        watcher = watch(root, { recursive: true }, () => {
          clearTimeout(timer);
          timer = setTimeout(onChange, SETTLE_MS);
        });
        // A folder removed while watched stops the watch; the last list stays.
        watcher.on('error', () => watcher?.close());
      } catch {
        // A file system without watches: the list stays as it was first read.
      }
      return () => {
        clearTimeout(timer);
        watcher?.close();
      };
    },
  };
}

/**
 * The Requests of a `delegate-serve` catalog URL (SERVE-4): fetched through the URL resolver, so
 * the host must be allowed as for `delegate-run` (DEL-15), each run from its URL; the catalog is
 * fetched again every {@link CATALOG_POLL_MS} to notice a change.
 */
export function catalogSource(url: string, resolver: UrlResolver): RequestSource {
  const list = async () => {
    const located = await resolver.resolve(url, { toolName: '(catalog)', tool: {} });
    const text = typeof located.content === 'string' ? located.content : new TextDecoder().decode(located.content);
    return catalogEntries(text, url).map((entry) => ({ entry: entryOf(entry), reference: new URL(entry.path, url).href }));
  };
  return {
    list,
    watch(onChange) {
      const timer = setInterval(onChange, CATALOG_POLL_MS);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
