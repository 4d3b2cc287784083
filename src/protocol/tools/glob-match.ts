/** Globs matched by picomatch within a time budget (FILES-12, TOOL-21, WRK-3): no glob from a document or a model can pin the CPU. */
import { createRequire } from 'node:module';
import { createContext, Script } from 'node:vm';

// picomatch (CommonJS) is loaded with the first glob compiled, not by every run (CLI-34).
const require = createRequire(import.meta.url);
let picomatch: typeof import('picomatch') | undefined;

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
  picomatch ??= require('picomatch') as typeof import('picomatch');
  const pattern = picomatch.makeRe(source, { dot: true, bash: names, noextglob: names, nobrace: names, nonegate: names });
  // Among names every character but `*` and `?` is escaped, so braces and parentheses are plain text there.
  const linear = (glob.match(/\*/g)?.length ?? 0) <= 1 && (names || !/[{}()|]/.test(glob));
  return { glob, pattern, linear };
}

// One vm context for every budgeted match: the script only calls back into this module.
let runner: { context: object; script: Script; job?: () => unknown } | undefined;

/** Runs `job` with V8 stopping it past the budget; true when it was stopped. */
function runBudgeted<T>(job: () => T): { value: T } | 'stopped' {
  if (runner === undefined) {
    const holder: { context: object; script: Script; job?: () => unknown } = { context: {}, script: new Script('job()') };
    holder.context = createContext({ job: () => holder.job?.() });
    runner = holder;
  }
  runner.job = job;
  try {
    return { value: runner.script.runInContext(runner.context, { timeout: GLOB_BUDGET_MS }) as T };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'stopped';
    throw error;
  } finally {
    runner.job = undefined;
  }
}

/**
 * For each name, the index of the first matcher that matches it, or -1. Globs that may backtrack
 * are run in a `vm` script with a timeout, which V8 enforces inside a running regular expression;
 * past {@link GLOB_BUDGET_MS} this throws a {@link GlobBudgetError} naming the glob that needed it.
 */
export function firstMatches(matchers: readonly GlobMatcher[], names: readonly string[]): number[] {
  const job = () => names.map((name) => matchers.findIndex((matcher) => matcher.pattern.test(name)));
  if (matchers.every((matcher) => matcher.linear)) return job();
  const outcome = runBudgeted(job);
  if (outcome !== 'stopped') return outcome.value;
  // Which glob it was: each that may backtrack alone, within the same budget.
  const costly = matchers.filter((matcher) => !matcher.linear);
  const culprit = costly.find((matcher) => runBudgeted(() => names.some((name) => matcher.pattern.test(name))) === 'stopped');
  if (culprit !== undefined) throw new GlobBudgetError(culprit.glob);
  // Each glob alone kept within the budget: the batch was slow (a busy machine, many globs), not
  // hostile, and running it again costs at most the budget once per glob.
  return job();
}
