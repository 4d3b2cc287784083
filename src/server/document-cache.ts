/** The documents `delegate-serve` answered lately, by URL path and file version, so an unchanged file is neither read nor judged again (SERVE-11). */

/** Documents remembered at most (SERVE-9, SERVE-11). */
export const CACHED_DOCUMENTS = 4096;
/** Bytes of documents remembered at most; a document larger than this alone is never cached. */
export const CACHED_BYTES = 64 * 1024 * 1024;

/** One document as it was last read: the version of the file and everything its answers are made of. */
export interface CachedDocument<Answer> {
  /** The version of the file the bytes were read from (device, inode, size, times). */
  version: string;
  /** How many bytes the entry holds, counted against {@link CACHED_BYTES}. */
  size: number;
  /** What the server answers for this version, built once. */
  answer: Answer;
}

/**
 * A bounded map from a document's URL path to the last version read and its answer. The least
 * recently used entries are dropped beyond {@link CACHED_DOCUMENTS} entries or
 * {@link CACHED_BYTES} bytes; an entry is only ever good for the very version it was read from,
 * which the caller checks on every request.
 */
export class DocumentCache<Answer> {
  private readonly entries = new Map<string, CachedDocument<Answer>>();
  private bytes = 0;

  /** A cache holding at most `maxEntries` documents and `maxBytes` bytes. */
  constructor(
    private readonly maxEntries = CACHED_DOCUMENTS,
    private readonly maxBytes = CACHED_BYTES,
  ) {}

  /** The entry for `path` if it is the file's current `version` (and marks it recently used); else undefined. */
  get(path: string, version: string): CachedDocument<Answer> | undefined {
    const entry = this.entries.get(path);
    if (entry === undefined || entry.version !== version) return undefined;
    this.entries.delete(path);
    this.entries.set(path, entry);
    return entry;
  }

  /** True when some version of `path` is remembered: a request for it starts from the file's metadata. */
  has(path: string): boolean {
    return this.entries.has(path);
  }

  /** Remembers `entry` as the current version of `path`, replacing any other; too large a document is not kept. */
  set(path: string, entry: CachedDocument<Answer>): void {
    this.delete(path);
    if (entry.size > this.maxBytes) return;
    this.entries.set(path, entry);
    this.bytes += entry.size;
    for (const [oldest, old] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.size;
    }
  }

  /** Forgets `path` (its file is gone or no longer servable). */
  delete(path: string): void {
    const entry = this.entries.get(path);
    if (entry === undefined) return;
    this.entries.delete(path);
    this.bytes -= entry.size;
  }

  /** How many documents are remembered. */
  get size(): number {
    return this.entries.size;
  }
}
