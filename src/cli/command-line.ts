/** What the executables' argument parsers share: node's parseArgs errors as usage errors, exactly one positional argument, and a subcommand's help and bad usage. */
import { UsageError } from '../protocol/errors.js';

/** Runs a parser (node's `parseArgs` with the command's options); whatever it throws becomes a UsageError (CLI-11). */
export function parseOrUsageError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The one positional argument, else a UsageError: `missing` when there is none, or naming them all (`Expected one <noun>, got 2: a b.`). */
export function onePositional(positionals: readonly string[], missing: string, noun: string): string {
  if (positionals.length === 1) return positionals[0] as string;
  throw new UsageError(positionals.length === 0 ? missing : `Expected one ${noun}, got ${positionals.length}: ${positionals.join(' ')}.`);
}

/**
 * A subcommand's arguments, or the exit status when there are none to run with: `--help` prints
 * `usage` on stdout (0); bad usage is said with `usage` through `say` (2, CLI-5).
 */
export function subcommandArguments<T>(parse: () => T | 'help', usage: string, stdout: NodeJS.WritableStream, say: (line: string) => void): T | number {
  let args: T | 'help';
  try {
    args = parse();
  } catch (error) {
    say(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (args !== 'help') return args;
  stdout.write(usage);
  return 0;
}
