/** Globs matched by picomatch within a time budget (FILES-12, TOOL-21, WRK-3): no glob from a document or a model can pin the CPU. */
import { createContext, Script } from 'node:vm';
import picomatch from 'picomatch';

/**
 * How long one batch of matches may run, in milliseconds. picomatch compiles a glob to a regular
 * expression that backtracks: `**a*a…*ab` with 25 stars against one 60-character name ran for
 * more than three minutes. A glob that needs more than this is refused, whatever it is.
 */
export const GLOB_BUDGET_MS = 100;

/** A glob compiled once. */
export interface GlobMatcher {
  /** The glob as written. */
  readonly glob: string;
  readonly pattern: RegExp;
  /**
   * True when the expression holds at most one unbounded repetition and no alternation, so it
   * runs in time linear in the name and needs no budget (the common `prefix-*`, `*.txt`).
   */
  readonly linear: boolean;
}

/** A glob that needed more than {@link GLOB_BUDGET_MS} to match; the caller says whose it was. */
export class GlobBudgetError extends Error {
  constructor(readonly glob: string) {
    super(`The glob "${glob}" took more than ${GLOB_BUDGET_MS} ms to match; use fewer wildcards.`);
    this.name = 'GlobBudgetError';
  }
}

/** Options for {@link compileGlob}. */
export interface GlobOptions {
  /**
   * Only `*` (any run of characters, `/` too) and `?` (one character) are special; every other
   * character stands for itself (tool and worker names).
   */
  wildcardsOnly?: boolean;
}

/** Compiles a glob with picomatch: `*` and `?` within a folder, `**` across, dotfiles matched like any file. */
export function compileGlob(glob: string, options: GlobOptions = {}): GlobMatcher {
  const source = options.wildcardsOnly ? glob.replace(/[^*?A-Za-z0-9_-]/g, '\\$&') : glob;
  const names = options.wildcardsOnly === true;
  // picomatch's `bash` makes a lone `*` cross `/` as `**` does; a name is one string, not a path.
  const pattern = picomatch.makeRe(source, { dot: true, bash: names, noextglob: names, nobrace: names, nonegate: names });
  const linear = (glob.match(/\*/g)?.length ?? 0) <= 1 && !/[{}()|]/.test(glob);
  return { glob, pattern, linear };
}

let sandbox: { context: object; script: Script; job?: () => unknown } | undefined;

/**
 * For each name, the index of the first matcher that matches it, or -1. Globs that may backtrack
 * are run in a `vm` script with a timeout, which V8 enforces inside a running regular expression;
 * past {@link GLOB_BUDGET_MS} this throws a {@link GlobBudgetError} naming the first such glob.
 */
export function firstMatches(matchers: readonly GlobMatcher[], names: readonly string[]): number[] {
  const job = () => names.map((name) => matchers.findIndex((matcher) => matcher.pattern.test(name)));
  if (matchers.every((matcher) => matcher.linear)) return job();
  if (sandbox === undefined) {
    const holder: { context: object; script: Script; job?: () => unknown } = { context: {}, script: new Script('job()') };
    holder.context = createContext({ job: () => holder.job?.() });
    sandbox = holder;
  }
  sandbox.job = job;
  try {
    return sandbox.script.runInContext(sandbox.context, { timeout: GLOB_BUDGET_MS }) as number[];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw new GlobBudgetError((matchers.find((matcher) => !matcher.linear) as GlobMatcher).glob);
    }
    throw error;
  } finally {
    sandbox.job = undefined;
  }
}
