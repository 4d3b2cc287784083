/** The built-in Activities of the `files` toolset (FILES-3 to FILES-13): list, read and write inside sandboxes confined by what is opened. */
import { randomBytes } from 'node:crypto';
import type { Dirent, Stats } from 'node:fs';
import { lstat, mkdir, readdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { ActivityError, CallError, ProtocolError } from '../protocol/errors.js';
import { MAX_FILE_BYTES, SANDBOXES_PROPERTY, type SandboxSpec } from '../protocol/tools/file-tools.js';
import { compileGlob, firstMatches, GlobBudgetError } from '../protocol/tools/glob-match.js';
import type { Activity } from '../protocol/contracts.js';
import { isJsonObject, type Call } from '../protocol/types.js';
import { isInside } from '../resolvers/reference-forms.js';
import {
  createExclusive,
  Escape,
  openForReading,
  PLATFORM_PINNING,
  type PinnedFolder,
  type Pinning,
  pinFolder,
  provenPlace,
  readAtMost,
} from './pinned-folder.js';
import { forbidden, locate, realTarget, type SandboxTarget, sandboxFolder, suffixAllowed } from './sandbox-path.js';

/** How deep a listing goes below the sandbox's folder (FILES-11). */
export const MAX_LIST_DEPTH = 32;

/** How many folder entries a listing looks at before it stops (FILES-11). */
export const MAX_LIST_ENTRIES = 10_000;

/** The last item of a listing that stopped at {@link MAX_LIST_ENTRIES} (FILES-11); never a `<sandbox>/…` path. */
export const LISTING_CUT = `[listing cut: the sandbox has more than ${MAX_LIST_ENTRIES} entries]`;

/** The name of a write's temporary file (FILES-9): hidden, random, never a name a listing shows. */
const TEMPORARY_NAME = /^\.[0-9a-f]{16}\.write$/;

/** Options of {@link createFileActivities}. */
export interface FileActivityOptions {
  /** How sandboxes are held (FILES-8); the platform's by default. Tests take the fallback here. */
  pinning?: Pinning;
}

/** The sandboxes a call carries: its tool fixes them (FILES-3). */
function sandboxesOf(call: Call): Record<string, SandboxSpec> {
  const sandboxes = call[SANDBOXES_PROPERTY];
  if (!isJsonObject(sandboxes)) throw new CallError('invalid_params', `The tool "${call._tool}" carries no sandboxes.`, { toolName: call._tool });
  return sandboxes as unknown as Record<string, SandboxSpec>;
}

/** The size cap of a sandbox: its own, never above the global one (FILES-5). */
function capOf(spec: SandboxSpec): number {
  return Math.min(spec.maxBytes ?? MAX_FILE_BYTES, MAX_FILE_BYTES);
}

/**
 * A file system failure as the model may see it (FILES-13): the path as the model wrote it
 * (`<sandbox>/<relative path>`) and the system's code, never the host path; the original error
 * stays as the cause.
 */
function failure(error: unknown, path: string, doing: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof Escape) return forbidden(path, error.message);
  const code = (error as NodeJS.ErrnoException).code;
  const options = { cause: error };
  switch (code) {
    case 'ENOENT':
      return new CallError('invalid_params', `There is no file "${path}".`, { path }, options);
    case 'ENOTDIR':
      return new CallError('invalid_params', `A file stands where "${path}" needs a folder.`, { path }, options);
    case 'EISDIR':
      return new CallError('invalid_params', `"${path}" is a folder, not a file.`, { path }, options);
    case 'ELOOP':
      return forbidden(path, 'a symbolic link stands on its way where none may, or its links loop');
    case 'ENXIO':
    case 'EOPNOTSUPP':
      return notRegular(path);
    case 'ENAMETOOLONG':
      return new CallError('invalid_params', `The path "${path}" has a name too long for the file system.`, { path }, options);
    default:
      return new ActivityError('activity_error', `Could not ${doing} "${path}" (${code ?? 'unknown error'}).`, { path }, options);
  }
}

function notRegular(path: string): CallError {
  return new CallError('invalid_params', `"${path}" is not a regular file (a FIFO, socket or device); the file tools take regular files only.`, { path });
}

function binary(path: string): CallError {
  return new CallError('invalid_params', `"${path}" is not UTF-8 text; read_file reads text files only.`, { path });
}

/** Creates the three Activities for files below `root`, the folder no sandbox may leave (FILES-2). */
export function createFileActivities(root: string, options: FileActivityOptions = {}): { list: Activity; read: Activity; write: Activity } {
  const pinning = options.pinning ?? PLATFORM_PINNING;

  /** The sandbox's folder, held open and proven to be the folder checked (FILES-8). */
  const pinSandbox = (folder: string): Promise<PinnedFolder> => pinFolder(folder, folder, pinning, false);

  /** The next folder on a write's way: opened and proven inside, or created and then opened without following links (FILES-8). */
  const enterFolder = async (parent: PinnedFolder, segment: string, inside: string): Promise<PinnedFolder> => {
    try {
      return await pinFolder(parent.entry(segment), inside, pinning);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await mkdir(parent.entry(segment)).catch((error: NodeJS.ErrnoException) => {
      // Made meanwhile by someone else, or a dangling link: the open below tells which.
      if (error.code !== 'EEXIST') throw error;
    });
    return pinFolder(parent.entry(segment), inside, pinning, false);
  };

  const list: Activity = async (call, _tool, _context, environment) => {
    const sandboxes = sandboxesOf(call);
    const name = call.sandbox;
    const spec = typeof name === 'string' && Object.hasOwn(sandboxes, name) ? sandboxes[name] : undefined;
    if (typeof name !== 'string' || spec === undefined) {
      throw new CallError('invalid_params', `Expected sandbox to be one of ${Object.keys(sandboxes).join(', ')}, got ${JSON.stringify(name)}.`);
    }
    let matcher: ReturnType<typeof compileGlob> | undefined;
    try {
      matcher = typeof call.glob === 'string' ? compileGlob(call.glob) : undefined;
    } catch {
      throw new CallError('invalid_params', `The glob ${JSON.stringify(call.glob)} is not a glob picomatch can read.`, { glob: call.glob });
    }
    const folder = await sandboxFolder(name, spec, root, environment.run.location);
    const found: string[] = [];
    const visited = new Set<string>();
    let entries = 0;
    let cut = false;
    // Links to folders are not followed and each folder is entered once, by device and inode, so
    // no arrangement of links or mounts makes the walk longer than the sandbox (FILES-11).
    const walk = async (directory: PinnedFolder, prefix: string[]): Promise<void> => {
      if (prefix.length >= MAX_LIST_DEPTH) return;
      let listed: Dirent[];
      try {
        listed = await readdir(directory.entry(''), { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of listed) {
        if (cut) return;
        // A write under way (FILES-9) is not a file yet.
        if (TEMPORARY_NAME.test(entry.name)) continue;
        if (++entries > MAX_LIST_ENTRIES) {
          cut = true;
          return;
        }
        const segments = [...prefix, entry.name];
        if (entry.isDirectory()) {
          const child = await pinFolder(directory.entry(entry.name), folder, pinning, false).catch(() => undefined);
          if (child === undefined) continue;
          try {
            const held = await child.handle.stat();
            const key = `${held.dev}:${held.ino}`;
            if (visited.has(key)) continue;
            visited.add(key);
            await walk(child, segments);
          } finally {
            await child.close();
          }
        } else if (entry.isFile() || (entry.isSymbolicLink() && (await linkedFileInside(directory.entry(entry.name), folder)))) {
          if (suffixAllowed(spec, entry.name)) found.push(segments.join('/'));
        }
      }
    };
    let sandbox: PinnedFolder;
    try {
      sandbox = await pinSandbox(folder);
    } catch (error) {
      throw failure(error, `${name}/`, 'list');
    }
    try {
      const held = await sandbox.handle.stat();
      visited.add(`${held.dev}:${held.ino}`);
      await walk(sandbox, []);
    } finally {
      await sandbox.close();
    }
    let kept = found;
    if (matcher !== undefined) {
      try {
        const matches = firstMatches([matcher], found);
        kept = found.filter((_path, index) => matches[index] === 0);
      } catch (error) {
        if (error instanceof GlobBudgetError) throw new CallError('invalid_params', error.message, { glob: error.glob });
        throw error;
      }
    }
    const listing = kept.sort().map((path) => `${name}/${path}`);
    return cut ? [...listing, LISTING_CUT] : listing;
  };

  const read: Activity = async (call, _tool, _context, environment) => {
    const path = String(call.path);
    const target = await locate(path, sandboxesOf(call), root, environment.run.location);
    if (!suffixAllowed(target.spec, target.relative)) throw forbidden(path, `the sandbox "${target.sandbox}" does not allow this file's suffix`);
    if (target.relative === '') throw new CallError('invalid_params', `"${path}" is a folder, not a file.`, { path });
    try {
      return await readConfined(target, path);
    } catch (error) {
      throw failure(error, path, 'read');
    }
  };

  /**
   * Opens the file and proves it from its descriptor (FILES-8): on Linux through the pinned
   * sandbox folder, a link inside the sandbox followed and the place it lands on checked; elsewhere
   * the checked real path opened without following a link and compared again after the open.
   */
  const readConfined = async (target: SandboxTarget, path: string): Promise<string> => {
    const sandbox = await pinSandbox(target.folder);
    try {
      let opened: string;
      if (pinning.descriptorPaths) opened = sandbox.entry(target.relative);
      else {
        const real = await realTarget(target, path);
        if (real === undefined) throw Object.assign(new Error('absent'), { code: 'ENOENT' });
        opened = real;
      }
      const handle = await openForReading(opened, pinning.descriptorPaths);
      try {
        const held = await handle.stat();
        await provenPlace(handle, opened, target.folder, pinning, held);
        checkRegular(held, path, target.spec, 'read');
        const cap = capOf(target.spec);
        const bytes = held.size > cap ? undefined : await readAtMost(handle, cap, held.size);
        if (bytes === undefined || bytes.length > cap)
          throw new CallError('invalid_params', `"${path}" has ${Math.max(held.size, bytes?.length ?? 0)} bytes, more than the ${cap} a read may return.`, {
            path,
            bytes: Math.max(held.size, bytes?.length ?? 0),
            maxBytes: cap,
          });
        if (bytes.includes(0)) throw binary(path);
        try {
          return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          throw binary(path);
        }
      } finally {
        await handle.close();
      }
    } finally {
      await sandbox.close();
    }
  };

  const write: Activity = async (call, _tool, _context, environment) => {
    const path = String(call.path);
    const content = call.content;
    if (typeof content !== 'string') throw new CallError('invalid_params', 'Expected content to be a string.');
    const target = await locate(path, sandboxesOf(call), root, environment.run.location);
    if (target.spec.mode !== 'rw') throw forbidden(path, `the sandbox "${target.sandbox}" is read-only`);
    if (target.relative === '') throw new CallError('invalid_params', `Expected a file inside the sandbox, got "${path}".`, { path });
    if (!suffixAllowed(target.spec, target.relative)) throw forbidden(path, `the sandbox "${target.sandbox}" does not allow this file's suffix`);
    const bytes = Buffer.from(content, 'utf8');
    const cap = capOf(target.spec);
    if (bytes.length > cap)
      throw new CallError('invalid_params', `The content has ${bytes.length} bytes, more than the ${cap} a write may hold.`, {
        path,
        bytes: bytes.length,
        maxBytes: cap,
      });
    try {
      await writeConfined(target, path, bytes);
    } catch (error) {
      throw failure(error, path, 'write');
    }
    return { path, bytes: bytes.length };
  };

  /**
   * Writes through the pinned folder (FILES-8, FILES-9): each folder on the way opened (or created,
   * then opened without following a link) and proven inside; the content written to a new file
   * beside the target, synced, then renamed over it, so a reader sees the old file or the new one.
   */
  const writeConfined = async (target: SandboxTarget, path: string, bytes: Buffer): Promise<void> => {
    const segments = target.relative.split('/');
    const name = segments.pop() as string;
    let folder = await pinSandbox(target.folder);
    try {
      for (const segment of segments) {
        const next = await enterFolder(folder, segment, target.folder);
        await folder.close();
        folder = next;
      }
      const existing = await lstat(folder.entry(name)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (existing?.isSymbolicLink()) throw forbidden(path, 'it is a symbolic link; write_file replaces regular files only');
      if (existing !== undefined) checkRegular(existing, path, target.spec, 'write');
      const temporary = `.${randomBytes(8).toString('hex')}.write`; // matches TEMPORARY_NAME
      const handle = await createExclusive(folder.entry(temporary), existing === undefined ? 0o666 : existing.mode & 0o7777);
      try {
        try {
          await provenPlace(handle, folder.entry(temporary), target.folder, pinning);
          await handle.writeFile(bytes);
          await handle.datasync();
        } finally {
          await handle.close();
        }
        await rename(folder.entry(temporary), folder.entry(name));
      } catch (error) {
        await unlink(folder.entry(temporary)).catch(() => undefined);
        throw error;
      }
      // The rename itself made durable; a folder that cannot be synced (some file systems) is no failure.
      await folder.handle.datasync().catch(() => undefined);
    } finally {
      await folder.close();
    }
  };

  return { list, read, write };
}

/**
 * Only regular files are read or written (FILES-10), and none with more than one hard link:
 * another name for it may lie outside the sandbox. A sandbox's `readHardLinks` lets reads through.
 */
function checkRegular(stats: Stats, path: string, spec: SandboxSpec, doing: 'read' | 'write'): void {
  if (stats.isDirectory()) throw new CallError('invalid_params', `"${path}" is a folder, not a file.`, { path });
  if (!stats.isFile()) throw notRegular(path);
  if (stats.nlink > 1 && (doing === 'write' || spec.readHardLinks !== true))
    throw forbidden(
      path,
      `it has ${stats.nlink} hard links, and another may lie outside the sandbox${doing === 'read' ? ' (the sandbox may allow reading them with "readHardLinks": true)' : ''}`,
    );
}

/** True when a symbolic link in a listed folder leads to a regular file inside the sandbox (FILES-11). */
async function linkedFileInside(path: string, folder: string): Promise<boolean> {
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined || !isInside(folder, real)) return false;
  return (await stat(real).catch(() => undefined))?.isFile() === true;
}
