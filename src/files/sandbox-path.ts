/** Confinement of file-toolset paths (FILES-4): `<sandbox>/<relative path>` resolved inside the sandbox's real folder, or refused. */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { DelegateError, CallError } from '../protocol/errors.js';
import type { SandboxSpec } from '../protocol/tools/file-tools.js';
import { isInside } from '../resolvers/reference-forms.js';

/** A path addressed in a sandbox, once confined. */
export interface SandboxTarget {
  /** The sandbox's name. */
  sandbox: string;
  spec: SandboxSpec;
  /** The sandbox folder's real path. */
  folder: string;
  /** The path inside it as written, `/`-separated ('' for the folder itself). */
  relative: string;
  /** The absolute path of the target below the real folder. */
  absolute: string;
}

/** Refuses an escape the way delegates are refused (DEL-7): `delegate_forbidden`, naming the path and why. */
export function forbidden(path: string, reason: string): DelegateError {
  return new DelegateError('delegate_forbidden', `The path "${path}" is forbidden: ${reason} (file tools are confined to their sandboxes).`, { path });
}

/**
 * The lexical checks every path goes through before the file system is asked (FILES-4): no NUL,
 * backslash or `%` (paths are never percent-decoded), not absolute, no empty, `.` or `..` segment.
 */
export function lexicalProblem(relative: string): string | undefined {
  if (relative.includes('\0')) return 'it contains a NUL byte';
  if (relative.includes('\\')) return 'it contains a backslash; use "/" between folders';
  if (relative.includes('%')) return 'it contains "%"; paths are plain and never percent-decoded';
  if (isAbsolute(relative) || /^[a-z]:/i.test(relative)) return 'it is absolute';
  if (relative === '') return undefined;
  if (relative.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return 'it has an empty, "." or ".." segment';
  return undefined;
}

/**
 * The real folder of a sandbox (FILES-2): its path resolved against the document's folder (the
 * root for a document that is not a file), refused when it leaves the root lexically or through a
 * symbolic link.
 */
export async function sandboxFolder(name: string, spec: SandboxSpec, root: string, location: string): Promise<string> {
  const base = isAbsolute(location) ? dirname(location) : root;
  const folder = resolvePath(base, spec.path);
  // Messages name the sandbox and its declared path, never a host path (FILES-13).
  if (!isInside(resolvePath(root), folder)) throw forbidden(`${name}/`, `the sandbox's folder "${spec.path}" is outside the root`);
  let real: string;
  let realRoot: string;
  try {
    [real, realRoot] = await Promise.all([realpath(folder), realpath(root)]);
  } catch {
    throw new CallError('invalid_params', `The sandbox "${name}" has no folder: its path "${spec.path}" does not exist.`, { sandbox: name });
  }
  if (!isInside(realRoot, real)) throw forbidden(`${name}/`, "the sandbox's folder leads through a symbolic link outside the root");
  return real;
}

/** Splits `<sandbox>/<relative>` and confines it lexically (FILES-4); the caller then checks the real path. */
export async function locate(path: string, sandboxes: Record<string, SandboxSpec>, root: string, location: string): Promise<SandboxTarget> {
  if (typeof path !== 'string' || path === '') throw new CallError('invalid_params', 'Expected a path "<sandbox>/<relative path>".');
  const slash = path.indexOf('/');
  const sandbox = slash < 0 ? path : path.slice(0, slash);
  const relative = slash < 0 ? '' : path.slice(slash + 1);
  const spec = sandboxes[sandbox];
  if (spec === undefined || !Object.hasOwn(sandboxes, sandbox)) {
    const problem = lexicalProblem(path);
    if (problem) throw forbidden(path, problem);
    throw new CallError('invalid_params', `Expected a path starting with a sandbox (${Object.keys(sandboxes).join(', ')}), got "${path}".`, { path });
  }
  const problem = lexicalProblem(relative);
  if (problem) throw forbidden(path, problem);
  const folder = await sandboxFolder(sandbox, spec, root, location);
  return { sandbox, spec, folder, relative, absolute: relative === '' ? folder : join(folder, ...relative.split('/')) };
}

/**
 * The real path of an existing target, refused when a symbolic link takes it out of its sandbox
 * (FILES-4); undefined when absent. A check before the open: only the fallback of FILES-8 uses it,
 * and proves the opened file again afterwards.
 */
export async function realTarget(target: SandboxTarget, path: string): Promise<string | undefined> {
  let real: string;
  try {
    real = await realpath(target.absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // A dangling link still names somewhere: refuse it rather than create its target.
      const link = await lstat(target.absolute).catch(() => undefined);
      if (link?.isSymbolicLink()) throw forbidden(path, 'it is a symbolic link that leads nowhere inside the sandbox');
      return undefined;
    }
    if (code === 'ELOOP') throw forbidden(path, 'its symbolic links loop');
    throw error;
  }
  if (!isInside(target.folder, real)) throw forbidden(path, 'it leads through a symbolic link outside the sandbox');
  return real;
}

/** True when the file name passes the sandbox's suffix policy (FILES-4): not denied and, when a list is given, allowed. */
export function suffixAllowed(spec: SandboxSpec, name: string): boolean {
  const lower = name.toLowerCase();
  if ((spec.denySuffixes ?? []).some((suffix) => lower.endsWith(suffix.toLowerCase()))) return false;
  return spec.allowSuffixes === undefined || spec.allowSuffixes.some((suffix) => lower.endsWith(suffix.toLowerCase()));
}
