#!/usr/bin/env node
/** The `delegate-run` executable: a thin command-line layer over the library (spec/cli.md). It loads the command only once it has more to do than print its version (CLI-34). */
import { EXIT, packageVersion } from './command-line.js';
import { isEntryPoint } from './entry.js';
import type { CliIo } from './run-setup.js';

/** Runs the command line; resolves to the exit status. `--version` alone is answered from package.json, with nothing else loaded (CLI-34). */
export async function main(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 1 && argv[0] === '--version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  return (await import('./run-command.js')).main(argv, io);
}

/** The signals that cancel a run, and the exit status of each: 128 + its number (CLI-13). */
const SIGNAL_EXIT = { SIGINT: EXIT.cancelled, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Exits with `status` once stdout and stderr have taken everything written to them (output piped
 * elsewhere is never cut short), without waiting for timers or sockets an Activity left open (CLI-16).
 */
function exitWhenWritten(status: number): void {
  process.exitCode = status;
  let pending = 2;
  for (const stream of [process.stdout, process.stderr]) {
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      if (--pending === 0) process.exit(status);
    };
    stream.once('error', settle);
    stream.write('', settle);
  }
}

/**
 * Wires the process's `beforeExit` (CLI-27): it is emitted when the event loop has emptied, so a
 * command still pending then can never finish. The listeners (the runtime's pending Activities)
 * are asked to fail what waits; when none can, the command fails at once, exit 1, never 0.
 */
function idleWatch(isPending: () => boolean): CliIo['onIdle'] {
  const listeners = new Set<() => boolean>();
  let failed = false;
  process.on('beforeExit', () => {
    if (failed || !isPending()) return;
    let woken = false;
    for (const listener of listeners) woken = listener() || woken;
    if (woken) return;
    failed = true;
    process.stderr.write('delegate-run: the run can never finish: it is still pending, and nothing is left in the process that could settle it.\n');
    exitWhenWritten(EXIT.failed);
  });
  return (listener) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };
}

if (isEntryPoint(import.meta.url)) {
  const controller = new AbortController();
  let pending = true;
  let received: keyof typeof SIGNAL_EXIT | undefined;
  for (const name of Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]) {
    process.on(name, () => {
      // The first signal cancels the run; a second quits at once, with its own status.
      if (received) process.exit(SIGNAL_EXIT[name]);
      received = name;
      controller.abort();
    });
  }
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    stdin: process.stdin,
    onIdle: idleWatch(() => pending),
  }).then(
    (status) => {
      pending = false;
      exitWhenWritten(received && status === EXIT.cancelled ? SIGNAL_EXIT[received] : status);
    },
    (error: unknown) => {
      pending = false;
      process.stderr.write(`delegate-run: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      exitWhenWritten(EXIT.failed);
    },
  );
}
