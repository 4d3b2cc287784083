/** Reading files from the served folder without ever leaving it: real-path confinement, no dotfiles, no symlink escapes. */
import { type BigIntStats, close, constants, type Dirent, fstat, open, read } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { isAbsolute, join, relative, sep } from 'node:path';
import { DOCUMENT_SUFFIX, isServableName } from './parse-request-path.js';

const openFile = promisify(open);
const fstatFile = promisify(fstat);
const closeFile = promisify(close);
/** `fs.read` into `buffer` at `offset`, `length` bytes from file `position`: the bytes read. */
const readAt = (fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolveRead, reject) => read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolveRead(bytesRead))));

// Errors that mean "there is nothing here the server may show"; anything else is a server fault.
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM', 'EISDIR', 'ENAMETOOLONG', 'EINVAL']);

// Bounds the folder walk even if symlinked folders keep producing new paths to walk.
const MAX_DEPTH = 32;

function isAbsent(error: unknown): boolean {
  return ABSENT_CODES.has(String((error as NodeJS.ErrnoException | undefined)?.code));
}

/** The real path of the served folder, or undefined when it does not exist (any more). */
async function realRootOf(root: string): Promise<string | undefined> {
  try {
    return await realpath(root);
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
}

/** The path of `real` relative to `realRoot` as segments, or undefined when it is not below it. */
function segmentsBelow(realRoot: string, real: string): string[] | undefined {
  const path = relative(realRoot, real);
  if (path === '') return [];
  if (isAbsolute(path) || path === '..' || path.startsWith(`..${sep}`)) return undefined;
  return path.split(sep);
}

/**
 * True when a real path (every symlink resolved) is a servable document of the folder: below the
 * real root, with no dot segment on the way, ending in `.json`. Checking the real path as well as
 * the requested one is what stops a symlink inside the folder from exposing a file outside it, a
 * dotfile, or a file that is not JSON.
 */
function isServableRealPath(realRoot: string, real: string): boolean {
  const segments = segmentsBelow(realRoot, real);
  if (segments === undefined || segments.length === 0) return false;
  return segments.every(isServableName) && real.endsWith(DOCUMENT_SUFFIX);
}

/** A servable document as `readConfinedDocument` found it. */
export interface ConfinedDocument {
  /** Who the file is and which version (SERVE-9): see `fileVersionOf`. */
  identity: string;
  /** Its bytes. */
  bytes: Uint8Array;
}

/**
 * The real path of the document at `segments` below `root` when it may be served (SERVE-6): below
 * the real root, through no dot-named folder, ending in `.json`, every symlink resolved. Undefined
 * when it is not there or not servable.
 */
async function servableRealPath(root: string, segments: readonly string[]): Promise<string | undefined> {
  const realRoot = await realRootOf(root);
  return realRoot === undefined ? undefined : servableRealPathBelow(realRoot, segments);
}

/** `servableRealPath` for a real root already resolved. */
async function servableRealPathBelow(realRoot: string, segments: readonly string[]): Promise<string | undefined> {
  let real: string;
  try {
    real = await realpath(join(realRoot, ...segments));
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
  return isServableRealPath(realRoot, real) ? real : undefined;
}

/**
 * The version of a file as its metadata tells it: device, inode, size, modification and change
 * times in nanoseconds. Equal versions mean the same file with the same bytes (SERVE-9, SERVE-11).
 */
function fileVersionOf(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/**
 * The versions (see `fileVersionOf`) of several documents below `root`, one promise each, the way
 * `delegate-serve` may serve them, from their metadata alone: confined as `readConfinedDocument`
 * confines, the last path component not followed if it became a symlink; undefined for one that is
 * not there or not servable. The real root is resolved once for all of them (SERVE-12). A cache
 * holding the bytes of a version may answer without reading the file (SERVE-11).
 */
export function statConfinedDocuments(root: string, documents: readonly (readonly string[])[]): Promise<string | undefined>[] {
  if (documents.length === 0) return [];
  const realRoot = realRootOf(root);
  return documents.map(async (segments) => {
    const resolvedRoot = await realRoot;
    const real = resolvedRoot === undefined ? undefined : await servableRealPathBelow(resolvedRoot, segments);
    if (real === undefined) return undefined;
    try {
      const stats = await lstat(real, { bigint: true });
      return stats.isFile() ? fileVersionOf(stats) : undefined;
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  });
}

/**
 * Reads a document below `root` the way `delegate-serve` may serve it: its real path inside the
 * real root (SERVE-6), a regular file, opened without following a last symlink, with the version
 * of the very file read. Undefined when it is not there or not servable.
 */
export async function readConfinedDocument(root: string, segments: readonly string[]): Promise<ConfinedDocument | undefined> {
  const real = await servableRealPath(root, segments);
  if (real === undefined) return undefined;
  let fd: number;
  try {
    fd = await openFile(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
  try {
    const stats = await fstatFile(fd, { bigint: true });
    if (!stats.isFile()) return undefined;
    return { identity: fileVersionOf(stats), bytes: await readToEnd(fd, Number(stats.size)) };
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  } finally {
    await closeFile(fd);
  }
}

/**
 * Reads an open file from its start to its end, expecting about `size` bytes (its stat) but
 * reading on until the end if it has grown since. Plain descriptors rather than a FileHandle: per
 * request the handle's bookkeeping cost more than the read itself.
 */
async function readToEnd(fd: number, size: number): Promise<Uint8Array> {
  // Not from Node's shared pool: a small document kept in the cache (SERVE-11) must not keep a pool slab alive.
  let buffer = Buffer.allocUnsafeSlow(size + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      const bigger = Buffer.allocUnsafeSlow(buffer.length * 2);
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const read = await readAt(fd, buffer, length, buffer.length - length, length);
    if (read === 0) return buffer.subarray(0, length);
    length += read;
  }
}

/**
 * Lists the paths (as segments) of every candidate document below `root`: `.json` files, found
 * recursively, skipping names `isServableName` refuses and folders whose real path leaves the real
 * root; symlinked folders inside the root are followed, except into a folder that is already on the
 * way down (a cycle), so a document may be listed under every path that reaches it. Sorted by path,
 * code unit by code unit. Candidates still go through `readConfinedDocument` (or `statConfinedDocuments`), which decide.
 */
export async function listDocumentPaths(root: string): Promise<string[][]> {
  const realRoot = await realRootOf(root);
  if (realRoot === undefined) return [];
  const found: string[][] = [];
  const walk = async (directory: string, prefix: string[], ancestors: ReadonlySet<string>): Promise<void> => {
    if (prefix.length >= MAX_DEPTH) return;
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      if (isAbsent(error)) return;
      throw error;
    }
    for (const entry of entries) {
      if (!isServableName(entry.name)) continue;
      const full = join(directory, entry.name);
      const segments = [...prefix, entry.name];
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const stats = await stat(full);
          isDirectory = stats.isDirectory();
          isFile = stats.isFile();
        } catch (error) {
          if (isAbsent(error)) continue;
          throw error;
        }
      }
      if (isFile && entry.name.endsWith(DOCUMENT_SUFFIX)) {
        found.push(segments);
      } else if (isDirectory) {
        let real: string;
        try {
          real = await realpath(full);
        } catch (error) {
          if (isAbsent(error)) continue;
          throw error;
        }
        if (segmentsBelow(realRoot, real) === undefined || ancestors.has(real)) continue;
        await walk(full, segments, new Set(ancestors).add(real));
      }
    }
  };
  await walk(realRoot, [], new Set([realRoot]));
  const key = (segments: string[]) => segments.join('/');
  return found.sort((left, right) => (key(left) < key(right) ? -1 : key(left) > key(right) ? 1 : 0));
}
