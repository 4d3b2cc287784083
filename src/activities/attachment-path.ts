/** Locating an attachment's file: a plain relative path confined to the caller's root (or a sandbox), refused as `delegate_forbidden` when it could escape (ATT-2). */
import { type FileHandle, realpath } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { Escape, openForReading, PLATFORM_PINNING, provenPlace, readAtMost } from '../files/pinned-folder.js';
import { DelegateError, ProtocolError } from '../protocol/errors.js';
import { isInside } from '../resolvers/reference-forms.js';

/** Where a path's segments are read from: a folder and the segments below it. */
export interface AttachmentPlace {
  /** The folder the file is confined to. */
  root: string;
  /** The segments below `root`. */
  segments: string[];
  /** The most bytes one file read from this place may have, and whose rule that is (a sandbox's `maxBytes`, ATT-2). */
  limit?: { maxBytes: number; rule: string };
}

/**
 * Finds the place of a path's segments other than the caller's root: a sandbox named by the first
 * segment (`<sandbox>/…`) answers its folder and the rest; undefined leaves the path to the root.
 */
export type AttachmentLocator = (segments: readonly string[]) => AttachmentPlace | undefined | Promise<AttachmentPlace | undefined>;

/** A read attachment file: the path as asked, its size, and its bytes (empty, unread, when its size passed the budget asked for). */
export interface AttachmentFile {
  path: string;
  bytes: number;
  content: Uint8Array;
}

function refuse(path: string, reason: string, data: Record<string, unknown> = {}): never {
  throw new DelegateError('delegate_forbidden', `Attachment "${path}" is forbidden: ${reason}.`, { path, ...data });
}

/**
 * The segments of an attachment path, or the `delegate_forbidden` refusal (ATT-2): empty, NUL,
 * backslash, `%` (never percent-decoded), absolute or drive-letter paths, empty segments and any
 * `..` segment are refused outright, even when the path would stay inside; `.` segments are dropped.
 */
export function attachmentSegments(path: string): string[] {
  if (path === '') refuse(path, 'the path is empty');
  if (path.includes('\0')) refuse(path, 'it contains a NUL byte');
  if (path.includes('\\')) refuse(path, 'it contains a backslash; use "/" between folders');
  if (path.includes('%')) refuse(path, 'it contains "%"; attachment paths are plain paths and are never percent-decoded');
  if (path.startsWith('/') || /^[a-z]:/i.test(path)) refuse(path, 'it is an absolute path; attachments are relative to the caller’s root');
  const segments = path.split('/').filter((segment) => segment !== '.');
  if (segments.includes('..')) refuse(path, 'it contains a ".." segment');
  if (segments.length === 0 || segments.includes('')) refuse(path, 'it has an empty segment');
  return segments;
}

const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR', 'EACCES', 'EPERM', 'ENAMETOOLONG']);

function isAbsent(error: unknown): boolean {
  return ABSENT.has(String((error as NodeJS.ErrnoException | undefined)?.code));
}

/**
 * Reads the attachment at `path` (ATT-2): the segments are placed by `locate` (a sandbox) or below
 * `root`, the real path (symlinks followed) must stay inside the real folder, and the regular file
 * is opened by its real path with O_NOFOLLOW, then proven inside from its descriptor as the file
 * tools prove theirs (FILES-8), so a folder swapped for a link between the look and the open does
 * not lead out. A path that escapes is `delegate_forbidden`; one that names nothing readable
 * (missing, a folder) is `invalid_params`. A file with more than `budget` bytes is not read: its
 * size comes back with empty content, for the policies to refuse by its size (ATT-3).
 */
export async function readAttachmentFile(root: string, path: string, locate?: AttachmentLocator, budget = Number.POSITIVE_INFINITY): Promise<AttachmentFile> {
  const segments = attachmentSegments(path);
  const place = (await locate?.(segments)) ?? { root, segments };
  const folder = resolvePath(place.root);
  const missing = (): never => {
    throw new ProtocolError('invalid_params', `Attachment "${path}" names no readable file.`, { path });
  };
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(folder);
    real = await realpath(join(folder, ...place.segments));
  } catch (error) {
    if (isAbsent(error)) return missing();
    throw error;
  }
  if (!isInside(realRoot, real)) refuse(path, 'it resolves through a symbolic link outside the folder it is confined to');
  let handle: FileHandle;
  try {
    handle = await openForReading(real, false);
  } catch (error) {
    if (isAbsent(error)) return missing();
    throw error;
  }
  try {
    const stats = await handle.stat();
    await provenPlace(handle, real, realRoot, PLATFORM_PINNING, stats).catch((error: unknown) => {
      if (error instanceof Escape) refuse(path, error.message);
      throw error;
    });
    if (!stats.isFile()) return missing();
    // Read no further than the limit or the budget, whatever the size said: the file may grow after the look.
    const { limit } = place;
    const cap = Math.min(limit?.maxBytes ?? Number.POSITIVE_INFINITY, budget);
    const content = stats.size > cap ? undefined : await readAtMost(handle, cap, stats.size);
    const bytes = Math.max(stats.size, content?.length ?? 0);
    if (limit !== undefined && bytes > limit.maxBytes)
      throw new ProtocolError('invalid_params', `Attachment "${path}" has ${bytes} bytes, more than the ${limit.maxBytes} that ${limit.rule} allows.`, {
        path,
        bytes,
        maxBytes: limit.maxBytes,
      });
    return { path, bytes, content: content === undefined || bytes > cap ? new Uint8Array() : content };
  } finally {
    await handle.close();
  }
}
