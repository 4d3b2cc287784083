/** The built-in Activities of the `files` toolset (FILES-3 to FILES-6): list, read and write inside confined sandboxes. */
import { constants, type Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CallError } from '../protocol/errors.js';
import { MAX_FILE_BYTES, SANDBOXES_PROPERTY, type SandboxSpec } from '../protocol/tools/file-tools.js';
import type { Activity } from '../protocol/contracts.js';
import { isJsonObject, type Call } from '../protocol/types.js';
import { isInside } from '../resolvers/reference-forms.js';
import { forbidden, locate, realTarget, sandboxFolder, suffixAllowed } from './sandbox-path.js';

// Bounds the walk even if symlinked folders keep producing new paths.
const MAX_DEPTH = 32;

/** The sandboxes a call carries: its tool fixes them (FILES-3). */
function sandboxesOf(call: Call): Record<string, SandboxSpec> {
  const sandboxes = call[SANDBOXES_PROPERTY];
  if (!isJsonObject(sandboxes)) throw new CallError('invalid_params', `The tool "${call._tool}" carries no sandboxes.`, { toolName: call._tool });
  return sandboxes as unknown as Record<string, SandboxSpec>;
}

/** The size cap of a sandbox: its own, never above the global one (FILES-4). */
function capOf(spec: SandboxSpec): number {
  return Math.min(spec.maxBytes ?? MAX_FILE_BYTES, MAX_FILE_BYTES);
}

/** A glob as a regular expression over `/`-separated paths: `**` crosses folders, `*` and `?` do not. */
export function globPattern(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string;
    if (char === '*' && glob[index + 1] === '*') {
      index++;
      if (glob[index + 1] === '/') {
        index++;
        source += '(?:.*/)?';
      } else source += '.*';
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Creates the three Activities for files below `root`, the folder no sandbox may leave (FILES-2). */
export function createFileActivities(root: string): { list: Activity; read: Activity; write: Activity } {
  const list: Activity = async (call, _tool, _context, environment) => {
    const sandboxes = sandboxesOf(call);
    const name = call.sandbox;
    const spec = typeof name === 'string' && Object.hasOwn(sandboxes, name) ? sandboxes[name] : undefined;
    if (typeof name !== 'string' || spec === undefined) {
      throw new CallError('invalid_params', `Expected sandbox to be one of ${Object.keys(sandboxes).join(', ')}, got ${JSON.stringify(name)}.`);
    }
    const folder = await sandboxFolder(name, spec, root, environment.run.location);
    const pattern = typeof call.glob === 'string' ? globPattern(call.glob) : undefined;
    const found: string[] = [];
    const walk = async (directory: string, prefix: string[], ancestors: ReadonlySet<string>): Promise<void> => {
      if (prefix.length >= MAX_DEPTH) return;
      let entries: Dirent[];
      try {
        entries = await readdir(directory, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const full = join(directory, entry.name);
        const segments = [...prefix, entry.name];
        let real: string;
        try {
          real = await realpath(full);
        } catch {
          continue;
        }
        // A symbolic link out of the sandbox is not there, as far as the model can see (FILES-4).
        if (!isInside(folder, real)) continue;
        const stats = await lstat(real).catch(() => undefined);
        if (stats?.isDirectory()) {
          if (!ancestors.has(real)) await walk(full, segments, new Set(ancestors).add(real));
        } else if (stats?.isFile()) {
          const path = segments.join('/');
          if (suffixAllowed(spec, entry.name) && (pattern === undefined || pattern.test(path))) found.push(`${name}/${path}`);
        }
      }
    };
    await walk(folder, [], new Set([folder]));
    return found.sort();
  };

  const read: Activity = async (call, _tool, _context, environment) => {
    const path = String(call.path);
    const target = await locate(path, sandboxesOf(call), root, environment.run.location);
    if (!suffixAllowed(target.spec, target.relative)) throw forbidden(path, `the sandbox "${target.sandbox}" does not allow this file's suffix`);
    const real = await realTarget(target, path);
    if (real === undefined) throw new CallError('invalid_params', `There is no file "${path}".`, { path });
    const handle = await open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new CallError('invalid_params', `"${path}" is not a file.`, { path });
      const cap = capOf(target.spec);
      if (stats.size > cap)
        throw new CallError('invalid_params', `"${path}" has ${stats.size} bytes, more than the ${cap} a read may return.`, {
          path,
          bytes: stats.size,
          maxBytes: cap,
        });
      const bytes = await handle.readFile();
      if (bytes.includes(0)) throw binary(path);
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw binary(path);
      }
    } finally {
      await handle.close();
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
    // Every existing folder on the way must really be inside the sandbox before one is created.
    await confineParents(target.folder, target.relative, path);
    await mkdir(dirname(target.absolute), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOTDIR' || error.code === 'EEXIST') throw new CallError('invalid_params', `A file stands where "${path}" needs a folder.`, { path });
      throw error;
    });
    // An existing file is written at its checked real path (a link inside the sandbox is followed there).
    const existing = await realTarget(target, path);
    const handle = await open(existing ?? target.absolute, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0)).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ELOOP') throw forbidden(path, 'it became a symbolic link while it was checked');
        if (error.code === 'EISDIR') throw new CallError('invalid_params', `"${path}" is a folder, not a file.`, { path });
        throw error;
      },
    );
    try {
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
    return { path, bytes: bytes.length };
  };

  return { list, read, write };
}

function binary(path: string): CallError {
  return new CallError('invalid_params', `"${path}" is not UTF-8 text; read_file reads text files only.`, { path });
}

/** Refuses a write whose existing parent folders lead out of the sandbox through a symbolic link (FILES-4). */
async function confineParents(folder: string, relative: string, path: string): Promise<void> {
  const segments = relative.split('/').slice(0, -1);
  let current = folder;
  for (const segment of segments) {
    current = join(current, segment);
    let real: string;
    try {
      real = await realpath(current);
    } catch {
      const link = await lstat(current).catch(() => undefined);
      if (link?.isSymbolicLink()) throw forbidden(path, 'a folder on its way is a symbolic link that leads nowhere');
      return;
    }
    if (!isInside(folder, real)) throw forbidden(path, `it leads through a symbolic link to ${real}, outside the sandbox`);
  }
}
