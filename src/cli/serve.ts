#!/usr/bin/env node
/** The `delegate-serve` executable: publishes a folder of Request documents over HTTP, read-only. */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createRequestHandler } from '../server/handler.js';
import { batchedLog } from '../files/batched-log.js';
import { serve, type RunningServer } from '../server/node-listener.js';
import { isUnknownName, packageVersion, parseCommandLine } from './command-line.js';
import { isEntryPoint } from './entry.js';

/** The usage text `--help` prints and bad arguments repeat. */
export const USAGE = `Usage: delegate-serve [dir] [--port 8787] [--host 127.0.0.1]

Serves the Request documents under dir (default: requests/) read-only over HTTP.

  GET /            the catalog of valid documents: [{path, name, description, input, output}]
  GET /<path>.json  one document (ETag, If-None-Match answers 304); invalid ones answer 422

Options:
  --port <n>    TCP port, 0 for any free port (default 8787)
  --host <addr> interface to bind (default 127.0.0.1)
  -h, --help    print this help
  --version     print the package's version
`;

const DEFAULT_DIR = 'requests/';
const DEFAULT_PORT = 8787;
const DEFAULT_HOST = '127.0.0.1';
/** The signals that stop the server gracefully (CLI-14): Ctrl-C, `kill`/container stops, a closed terminal. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Where `main` writes and what stops it; every field defaults to the real process. */
export interface ServeCommandIo {
  /** Receives `--help` (default: process.stdout). */
  stdout?: { write(text: string): unknown };
  /** Receives the startup line, the access log and errors (default: process.stderr). */
  stderr?: { write(text: string): unknown };
  /** Folder `dir` is resolved against (default: process.cwd()). */
  cwd?: string;
  /** Stops the server gracefully when aborted, as SIGINT, SIGTERM and SIGHUP do. */
  signal?: AbortSignal;
  /** Called once the server listens (tests use it to learn the URL). */
  onListening?: (server: { url: string; port: number; root: string }) => void;
}

function parseServeArguments(argv: string[]) {
  return parseCommandLine({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
}

/**
 * Runs `delegate-serve` with `argv` (the arguments after the executable) and resolves with the
 * exit status: `0` after a graceful shutdown (SIGINT, SIGTERM, SIGHUP or `io.signal`) or `--help`, `1` when
 * the server cannot listen, `2` for bad arguments or a missing folder. A second signal while
 * shutting down cuts the connections still open.
 */
export async function main(argv: string[], io: ServeCommandIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const usageError = (message: string): number => {
    stderr.write(`delegate-serve: ${message}\n\n${USAGE}`);
    return 2;
  };

  let parsed: ReturnType<typeof parseServeArguments>;
  try {
    parsed = parseServeArguments(argv);
  } catch (error) {
    // An unknown option is one line naming the nearest one (CLI-29).
    if (!isUnknownName(error)) return usageError((error as Error).message);
    stderr.write(`delegate-serve: ${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (positionals.length > 1) return usageError(`expected at most one folder, got ${positionals.length}: ${positionals.join(', ')}.`);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || port > 65535)) {
    return usageError(`expected --port to be a whole number from 0 to 65535, got "${values.port}".`);
  }
  const host = values.host ?? DEFAULT_HOST;
  if (host.trim() === '') return usageError('expected --host to name an interface, got an empty string.');

  const dir = positionals[0] ?? DEFAULT_DIR;
  const root = resolve(io.cwd ?? process.cwd(), dir);
  const found = await stat(root).catch(() => undefined);
  if (found === undefined) {
    stderr.write(`delegate-serve: the folder "${dir}" does not exist (looked for ${root}).\n`);
    return 2;
  }
  if (!found.isDirectory()) {
    stderr.write(`delegate-serve: expected "${dir}" to be a folder of Request documents, but it is a file.\n`);
    return 2;
  }

  // The access log is written in batches and flushed before anything else is said or the process exits (SERVE-10).
  const access = batchedLog((text) => stderr.write(text));
  process.on('exit', access.flush);
  const handler = createRequestHandler({ root, log: access.line });
  let server: RunningServer;
  try {
    server = await serve(handler, { port, host });
  } catch (error) {
    process.off('exit', access.flush);
    stderr.write(`delegate-serve: could not listen on ${host}:${port}: ${(error as Error).message}\n`);
    return 1;
  }
  stderr.write(`delegate-serve: serving ${root} at ${server.url}/ (Ctrl-C to stop)\n`);
  io.onListening?.({ url: server.url, port: server.port, root });

  await new Promise<void>((resolveStop) => {
    let stopping = false;
    const stop = () => {
      if (stopping) {
        // A second request to stop: do not wait for slow clients any longer.
        void server.close({ force: true });
        return;
      }
      stopping = true;
      access.flush();
      stderr.write('delegate-serve: shutting down\n');
      void server.close().then(finish, finish);
    };
    const finish = () => {
      access.flush();
      process.off('exit', access.flush);
      for (const signal of STOP_SIGNALS) process.off(signal, stop);
      io.signal?.removeEventListener('abort', stop);
      resolveStop();
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener('abort', stop);
  });
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`delegate-serve: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
