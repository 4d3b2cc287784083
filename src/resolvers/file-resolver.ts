/** The file resolver: relative `.json` references, resolved against the referring file and confined to a root folder. */
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path';
import { abortable } from '../protocol/cancellation.js';
import { DelegateError } from '../protocol/errors.js';
import { splitIntegrity } from './integrity.js';
import { hasScheme, isAnonymousReference, isHttpUrl, isInside } from './reference-forms.js';
import type { LocatedRequest, ResolveContext, Resolver } from './resolver.js';

/** Options of {@link FileResolver}. */
export interface FileResolverOptions {
  /** The folder file delegates are confined to (made absolute against the working directory). */
  root: string;
}

/**
 * Resolves relative file references such as `./summarizer.json` or `../common/tool.json`.
 *
 * The reference is resolved against the folder of `context.base` (the referring file), or against
 * the root when there is no base (an in-memory document). It is refused (`delegate_forbidden`) when
 * it is empty, absolute, contains a backslash, a NUL byte or any `%` (references are plain paths,
 * never percent-decoded: refusing `%` outright means `%2e%2e`, `%2f` and `%5c` cannot smuggle a
 * separator or a parent step past the checks), does not end in `.json`, leaves the root lexically
 * (`..` is fine while it stays inside), or leaves the real root once symbolic links are followed.
 * A missing file is `delegate_not_found`. Documents under the root are trusted.
 */
export class FileResolver implements Resolver {
  /** The registry name of this resolver. */
  readonly name = 'file';
  /** The reference form this resolver understands, for error messages. */
  readonly form = 'a relative path to a .json file inside the root folder (resolved against the referring file)';
  /** The absolute root folder delegates are confined to. */
  readonly root: string;
  /** The reads in flight, by target and reference. */
  private readonly reading = new Map<string, Promise<LocatedRequest>>();

  constructor(options: FileResolverOptions) {
    this.root = resolvePath(options.root);
  }

  /**
   * Accepts references without a URL scheme (and not `anonymous`) when the referring document is
   * a file (absolute path) or in memory; relative references from a URL belong to the URL resolver,
   * and from any other kind of location (e.g. `anonymous:<tool>`) to no file at all.
   */
  accepts(reference: string, context: ResolveContext): boolean {
    if (isAnonymousReference(reference) || hasScheme(reference)) return false;
    if (context.base === undefined) return true;
    return !isHttpUrl(context.base) && isAbsolute(context.base);
  }

  /** Resolves, confines and reads the referenced file. */
  async resolve(reference: string, context: ResolveContext): Promise<LocatedRequest> {
    const { reference: path } = splitIntegrity(reference);
    const refuse = (reason: string, data: Record<string, unknown> = {}): never => {
      throw new DelegateError('delegate_forbidden', `Delegate "${reference}" is forbidden: ${reason} (file delegates are confined to the root ${this.root}).`, {
        reference,
        root: this.root,
        ...data,
      });
    };
    if (path === '') refuse('the reference is empty');
    if (path.includes('\0')) refuse('it contains a NUL byte');
    if (path.includes('\\')) refuse('it contains a backslash; use "/" between folders');
    if (path.includes('%')) refuse('it contains "%"; file references are plain paths and are never percent-decoded');
    if (isAbsolute(path) || /^[a-z]:/i.test(path)) refuse('it is an absolute path; file delegates must be relative to the referring document');
    if (!path.endsWith('.json')) refuse('only .json files can be delegates');

    const from = context.base === undefined ? this.root : dirname(context.base);
    const target = resolvePath(from, path);
    if (!isInside(this.root, target)) refuse(`it resolves to ${target}, outside the root`, { path: target });

    // Children resolving the same reference at the same moment (a fan-out) share one read (DEL-29).
    const key = `${target}\u0000${reference}`;
    let reading = this.reading.get(key);
    if (!reading) {
      reading = this.read(reference, target, refuse).finally(() => this.reading.delete(key));
      this.reading.set(key, reading);
    }
    return abortable(reading, context.signal, () => new DOMException('This operation was aborted', 'AbortError'));
  }

  /** Confines `target` once symbolic links are followed, and reads it. */
  private async read(reference: string, target: string, refuse: (reason: string, data?: Record<string, unknown>) => never): Promise<LocatedRequest> {
    const realRoot = await this.realRoot(reference);
    let real: string;
    try {
      real = await realpath(target);
    } catch (error) {
      throw this.fileError(error, reference, target);
    }
    if (!isInside(realRoot, real))
      refuse(`it resolves through a symbolic link to ${real}, outside the real root ${realRoot}`, { path: target, realPath: real });

    let bytes: Buffer;
    try {
      if (!(await stat(real)).isFile()) {
        throw new DelegateError('delegate_not_found', `Delegate "${reference}" was not found: ${target} is not a file.`, { reference, path: target });
      }
      // Read the real path that was checked, so the file read is the file confined.
      bytes = await readFile(real);
    } catch (error) {
      throw this.fileError(error, reference, target);
    }
    return { location: target, content: bytes, trusted: true };
  }

  private async realRoot(reference: string): Promise<string> {
    try {
      return await realpath(this.root);
    } catch (error) {
      throw new DelegateError(
        'delegate_not_found',
        `Delegate "${reference}" was not found: the root folder ${this.root} does not exist (${(error as Error).message}).`,
        {
          reference,
          root: this.root,
        },
      );
    }
  }

  private fileError(error: unknown, reference: string, target: string): unknown {
    if (error instanceof DelegateError || (error instanceof Error && error.name === 'AbortError')) return error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'ELOOP') {
      return new DelegateError(
        'delegate_forbidden',
        `Delegate "${reference}" is forbidden: ${target} cannot be read (${code}).`,
        { reference, root: this.root, path: target },
        { cause: error },
      );
    }
    const why = code === 'ENOENT' || code === 'ENOTDIR' ? 'there is no file' : `it cannot be read (${(error as Error).message})`;
    return new DelegateError(
      'delegate_not_found',
      `Delegate "${reference}" was not found: expected a Request file at ${target}, but ${why}.`,
      { reference, path: target },
      { cause: error },
    );
  }
}
