/** Folders and files held open and proven inside a sandbox from their descriptors (FILES-8): confinement by what is opened, not by a check before it. */
import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { isInside } from '../resolvers/reference-forms.js';

/**
 * True where `/proc/self/fd/<n>` names an open descriptor (Linux): a folder opened once is then
 * addressed through it, so renaming or swapping folders on its way no longer matters (FILES-8).
 */
export const DESCRIPTOR_PATHS = process.platform === 'linux' && existsSync('/proc/self/fd');

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

/** How a sandbox is held: through descriptor paths (Linux) or, elsewhere, checked real paths. */
export interface Pinning {
  /** Use `/proc/self/fd/<n>` paths; false takes the weaker fallback even on Linux (its tests). */
  descriptorPaths: boolean;
}

/** The default pinning of this platform. */
export const PLATFORM_PINNING: Pinning = { descriptorPaths: DESCRIPTOR_PATHS };

/** Why an open was refused: it led outside the sandbox or changed while it was opened. */
export class Escape extends Error {}

/** A folder held open and proven inside its sandbox (FILES-8). */
export interface PinnedFolder {
  /** Where the folder really is, as its descriptor says (Linux) or as checked after opening. */
  readonly real: string;
  readonly handle: FileHandle;
  /** The path of an entry of this very folder: `/proc/self/fd/<n>/<name>` on Linux, below `real` elsewhere. */
  entry(name: string): string;
  close(): Promise<void>;
}

/** Where an open descriptor really is (Linux): what `/proc/self/fd/<n>` points to. */
async function placeOf(handle: FileHandle): Promise<string> {
  return readlink(`/proc/self/fd/${handle.fd}`);
}

/**
 * Proves an opened file or folder inside `inside` (FILES-8). On Linux the descriptor's own place
 * is read back from `/proc`, so no rename between the open and the check can fool it. Elsewhere
 * the path is resolved again after the open and must name the same device and inode, inside.
 */
export async function provenPlace(handle: FileHandle, path: string, inside: string, pinning: Pinning, opened?: Stats): Promise<string> {
  if (pinning.descriptorPaths) {
    const place = await placeOf(handle);
    if (!isInside(inside, place)) throw new Escape('it leads outside the folder it is confined to');
    return place;
  }
  const held = opened ?? (await handle.stat());
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined || !isInside(inside, real)) throw new Escape('it leads outside the folder it is confined to');
  // The real path must name the very file held, and still resolve to itself after that look: a
  // folder swapped back and forth must have turned twice more in between to pass.
  const named = await lstat(real).catch(() => undefined);
  if (named === undefined || named.dev !== held.dev || named.ino !== held.ino) throw new Escape('it changed while it was opened');
  if ((await realpath(real).catch(() => undefined)) !== real) throw new Escape('it changed while it was opened');
  return real;
}

/**
 * Opens a folder and proves it inside `inside` (FILES-8). `follow` lets a symbolic link lead to
 * it (a link inside the sandbox, proven by where the descriptor lands); without it a link fails
 * with ELOOP or ENOTDIR, as the system says.
 */
export async function pinFolder(path: string, inside: string, pinning: Pinning, follow = true): Promise<PinnedFolder> {
  const handle = await open(path, constants.O_RDONLY | DIRECTORY | NONBLOCK | (follow ? 0 : NOFOLLOW));
  try {
    const held = await handle.stat();
    if (!held.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    const real = await provenPlace(handle, path, inside, pinning, held);
    const base = pinning.descriptorPaths ? `/proc/self/fd/${handle.fd}` : real;
    return {
      real,
      handle,
      entry: (name) => (name === '' ? base : pinning.descriptorPaths ? `${base}/${name}` : join(base, name)),
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens a file for reading without blocking (FILES-10: a FIFO opened this way does not wait for a
 * writer) and without taking a terminal; the caller proves it inside and checks its type.
 */
export function openForReading(path: string, follow: boolean): Promise<FileHandle> {
  return open(path, constants.O_RDONLY | NONBLOCK | NOCTTY | (follow ? 0 : NOFOLLOW));
}

/** Creates a new file that no link may redirect: exclusive, never through a link (FILES-9). */
export function createExclusive(path: string, mode: number): Promise<FileHandle> {
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW | NOCTTY, mode);
}

/**
 * Reads at most `cap + 1` bytes, whatever the file's size said when it was checked: a buffer of the
 * size it said, grown only if the file grew meanwhile.
 */
export async function readAtMost(handle: FileHandle, cap: number, expected: number): Promise<Buffer> {
  let buffer = Buffer.alloc(Math.min(expected, cap) + 1);
  let filled = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
    if (filled < buffer.length) continue;
    if (buffer.length > cap) return buffer;
    buffer = Buffer.concat([buffer, Buffer.alloc(Math.min(buffer.length, cap + 1 - buffer.length))]);
  }
}
