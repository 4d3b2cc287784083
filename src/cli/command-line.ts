/** What the executables' argument parsers share: node's parseArgs errors as usage errors, "did you mean" for unknown names, --version, exactly one positional argument, and a subcommand's help and bad usage. */
import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../protocol/errors.js';
import { nearestName } from '../protocol/nearest-name.js';

/** Exit statuses (CLI-5). */
export const EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 130 } as const;

/**
 * Node's `parseArgs` with `config`, its errors as UsageErrors (CLI-11); an option not in
 * `config.options` is one line naming it and the nearest option there is, or of `more` (CLI-29).
 */
export function parseCommandLine<T extends ParseArgsConfig>(config: T, more: readonly string[] = []): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const unknown = /^Unknown option '([^']+)'/.exec((error as Error).message)?.[1];
    if (unknown === undefined) throw new UsageError((error as Error).message);
    const options = Object.entries(config.options ?? {}).flatMap(([name, option]) => [`--${name}`, ...(option.short ? [`-${option.short}`] : [])]);
    throw unknownName('option', unknown.replace(/=.*$/, ''), [...options, ...more]);
  }
}

/**
 * The usage error of a name that is none of `valid` (an option, a subcommand, CLI-29): one line
 * naming it and the nearest valid one, `unknown option --max-step; did you mean --max-steps?`, or
 * pointing to `--help` when none is near. Its data has `unknown` and `nearest`, and it is said
 * without the usage text.
 */
export function unknownName(kind: string, given: string, valid: readonly string[]): UsageError {
  const nearest = nearestName(given, valid);
  const hint = nearest === undefined ? ' (--help lists them)' : `; did you mean ${nearest}?`;
  return new UsageError(`unknown ${kind} ${given}${hint}`, { unknown: given, ...(nearest === undefined ? {} : { nearest }) });
}

/** True for a usage error said in one line, without the usage text: an unknown name (CLI-29). */
export function isUnknownName(error: unknown): boolean {
  return error instanceof UsageError && typeof error.data.unknown === 'string';
}

/** The package's version, from its package.json: what `--version` prints on every executable (CLI-29). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return String((JSON.parse(text) as { version?: unknown }).version);
}

/** The one positional argument, else a UsageError: `missing` when there is none, or naming them all (`Expected one <noun>, got 2: a b.`). */
export function onePositional(positionals: readonly string[], missing: string, noun: string): string {
  if (positionals.length === 1) return positionals[0] as string;
  throw new UsageError(positionals.length === 0 ? missing : `Expected one ${noun}, got ${positionals.length}: ${positionals.join(' ')}.`);
}

/**
 * A subcommand's arguments, or the exit status when there are none to run with: `--help` prints
 * `usage` on stdout (0), `--version` the package's version (0); bad usage is said with `usage`
 * through `say` (2, CLI-5), an unknown name in one line alone (CLI-29).
 */
export function subcommandArguments<T>(
  parse: () => T | 'help' | 'version',
  usage: string,
  stdout: NodeJS.WritableStream,
  say: (line: string) => void,
): T | number {
  let args: T | 'help' | 'version';
  try {
    args = parse();
  } catch (error) {
    say(isUnknownName(error) ? (error as Error).message : `${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (args === 'version') {
    stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (args !== 'help') return args;
  stdout.write(usage);
  return 0;
}
