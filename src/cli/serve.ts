#!/usr/bin/env node
/** The `delegate-serve` executable: publishes a folder of Request documents over HTTP, read-only. */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createRequestHandler } from '../server/handler.js';
import { batchedLog } from '../files/batched-log.js';
import { serve, type RunningServer } from '../server/node-listener.js';
import { isUnknownName, packageVersion, parseCommandLine } from './command-line.js';
import type { ParsedArguments } from './run-setup.js';
import type { A2aFace } from './serve-a2a.js';
import { isEntryPoint } from './entry.js';

/** The usage text `--help` prints and bad arguments repeat. */
export const USAGE = `Usage: delegate-serve [dir] [--port 8787] [--host 127.0.0.1] [--a2a [delegate-run's run options]]

Serves the Request documents under dir (default: requests/) read-only over HTTP.

  GET /            the catalog of valid documents: [{path, name, description, input, output}]
  GET /<path>.json  one document (ETag, If-None-Match answers 304); invalid ones answer 422

With --a2a, each Request <path>.json is also an A2A agent that runs it (docs/06-serving-and-mcp.md):
  GET  /a2a/                                   every agent's card
  GET  /a2a/<path>/.well-known/agent-card.json  one agent's card
  POST /a2a/<path>                             A2A JSON-RPC: message/send, message/stream, tasks/cancel, ...

Options:
  --port <n>    TCP port, 0 for any free port (default 8787)
  --host <addr> interface to bind (default 127.0.0.1)
  --a2a         serve each Request as an A2A agent; takes delegate-run's run options (--model,
                --activities, --trace, --approve approve_all|strict, ...); approvals are asked of
                the client (input-required) unless --approve answers them
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
  /** The environment the runs of `--a2a` see (default: process.env). */
  env?: Record<string, string | undefined>;
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
      a2a: { type: 'boolean' },
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

  // With --a2a, the options other than delegate-serve's own are delegate-run's, for the runs (A2A-11);
  // they are read by the A2A face, loaded only then (startup cost).
  let ownArgv = argv;
  let face: { module: typeof import('./serve-a2a.js'); args: ParsedArguments } | undefined;
  if (asksForA2a(argv)) {
    const { own, rest } = takeOwnOptions(argv);
    const module = await import('./serve-a2a.js');
    let args: ReturnType<typeof module.parseA2aArguments>;
    try {
      args = module.parseA2aArguments(rest, io.cwd ?? process.cwd(), DEFAULT_DIR);
    } catch (error) {
      return usageError((error as Error).message);
    }
    if (args === 'help' || args === 'version') ownArgv = [`--${args}`];
    else {
      face = { module, args };
      ownArgv = [...own, args.request];
    }
  }
  let parsed: ReturnType<typeof parseServeArguments>;
  try {
    parsed = parseServeArguments(ownArgv);
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
  const onError = (error: unknown) => void stderr.write(`delegate-serve: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  const handler = createRequestHandler({ root, log: access.line, onError });
  let origin = '';
  let a2a: A2aFace | undefined;
  if (face !== undefined) {
    const env = io.env ?? process.env;
    const cwd = io.cwd ?? process.cwd();
    const cliIo = { stdout: stdout as NodeJS.WritableStream, stderr: stderr as NodeJS.WritableStream, env, cwd, ...(io.signal ? { signal: io.signal } : {}) };
    try {
      a2a = await face.module.a2aFace(face.args, cliIo, {
        root,
        documents: handler,
        origin: () => origin,
        version: packageVersion(),
        log: access.line,
        onError,
      });
    } catch (error) {
      process.off('exit', access.flush);
      stderr.write(`delegate-serve: ${(error as Error).message}\n`);
      return 2;
    }
  }
  let server: RunningServer;
  try {
    server = await serve(a2a === undefined ? handler : a2a.served, { port, host });
  } catch (error) {
    process.off('exit', access.flush);
    await a2a?.close();
    stderr.write(`delegate-serve: could not listen on ${host}:${port}: ${(error as Error).message}\n`);
    return 1;
  }
  origin = server.url;
  stderr.write(
    `delegate-serve: serving ${root} at ${server.url}/${a2a === undefined ? '' : `, its Requests as A2A agents at ${server.url}/a2a/`} (Ctrl-C to stop)\n`,
  );
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
      // The tasks still running are cancelled, so their streams and waiting calls end (A2A-9).
      a2a?.handler.close();
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
  // The A2A runs' trace and resolvers are closed once the server has stopped.
  await a2a?.close();
  return 0;
}

/** The options of delegate-serve's own that take a value; with `--a2a`, every option but these, `--a2a` and `--help`/`--version` is delegate-run's. */
const VALUED_OPTIONS = ['--port', '--host'] as const;

/** Whether the command line asks for `--a2a` (before any `--`). */
function asksForA2a(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--a2a');
}

/** Takes delegate-serve's own options (`--port`, `--host` with their values, `--a2a`) out of a command line with `--a2a`; the rest is delegate-run's (A2A-11). */
function takeOwnOptions(argv: string[]): { own: string[]; rest: string[] } {
  const own: string[] = [];
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--') {
      rest.push(...argv.slice(index));
      break;
    }
    if (argument === '--a2a' || VALUED_OPTIONS.some((option) => argument.startsWith(`${option}=`))) own.push(argument);
    else if ((VALUED_OPTIONS as readonly string[]).includes(argument)) {
      own.push(argument, ...argv.slice(index + 1, index + 2));
      index++;
    } else rest.push(argument);
  }
  return { own, rest };
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
