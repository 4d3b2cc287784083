#!/usr/bin/env node
/** The `delegate-mcp` executable (MCP-8 to MCP-17): a folder or catalog of Requests served as MCP tools, over stdio or Streamable HTTP. */
import { subcommandArguments } from './command-line.js';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createApprovalHook } from '../approvals/approval-policy.js';
import type { DelegatingRuntime } from '../create-runtime.js';
import { createMcpHttpHandler, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS, MCP_PATH } from '../mcp/http-sessions.js';
import { type RequestSource, catalogSource, folderSource } from '../mcp/request-source.js';
import { RequestTools, type ToolCallRun } from '../mcp/request-server.js';
import type { ListedRequest } from '../mcp/request-tool.js';
import { parseTimeoutSeconds } from '../models/live-model-options.js';
import { ModelCatalog } from '../models/model-catalog.js';
import { ProtocolError, UsageError } from '../protocol/errors.js';
import type { RunResult } from '../protocol/contracts.js';
import { isHttpUrl } from '../resolvers/reference-forms.js';
import type { UrlResolver } from '../resolvers/url-resolver.js';
import { type RunningServer, serve } from '../server/node-listener.js';
import { startTelemetry } from './telemetry-option.js';
import { isEntryPoint } from './entry.js';
import { SERVER_REFUSED_OPTIONS, servedRunner } from './served-run.js';
import {
  type CliIo,
  EXIT,
  loadActivities,
  openCheckedTrace,
  type ParsedArguments,
  parseArguments,
  parseWithOptions,
  queueOptions,
  runtimeFor,
  wholeNumber,
} from './run-setup.js';
import { RunSession } from './run-session.js';

/** The usage text `--help` prints and bad arguments repeat. */
export const USAGE = `Usage: delegate-mcp [dir | catalog URL] [--http <port>] [delegate-run's run options]

Serves every valid Request of dir (default: requests/), or of a delegate-serve catalog URL, as a
tool of a Model Context Protocol server: over stdio, or with --http over Streamable HTTP at
http://127.0.0.1:<port>${MCP_PATH}. A tool call runs its Request as delegate-run would.

Options:
  --http <port>   serve Streamable HTTP on 127.0.0.1 instead of stdio (0 picks a free port)
  --session-idle <seconds>
                  with --http: close a session after this long with no request open (default ${DEFAULT_SESSION_IDLE_MS / 1000})
  --max-sessions <n>
                  with --http: sessions open at once; past it the least recently used idle one is
                  closed, and a new session is refused while all are busy (default ${DEFAULT_MAX_SESSIONS})
  --model, --base-url, --activities, --resolve, --approve approve_all|strict (default strict),
  --trace, --max-steps, --max-depth, --max-concurrency, --max-runs, --budget-tokens, --budget-usd,
  --allow-host, --trust-host, --root, --workers-dir, --tier, --model-timeout, --model-retries,
  --queue, --queue-name, --queue-timeout, --queue-heartbeat, --queue-keep, --otel, --otel-content
                  as for delegate-run (delegate-run --help); with --queue each call's delegations are
                  jobs for delegate-worker; a call's _meta.traceparent is the parent of its spans
  -h, --help      this text
  --version       print the package's version
`;

/** The folder served when none is named (as delegate-serve's). */
const DEFAULT_SOURCE = 'requests/';
/** The command line of delegate-mcp: delegate-run's run options, the source as the request, `--http` and its session bounds. */
interface McpArguments {
  run: ParsedArguments;
  source: string;
  http?: number;
  /** `--session-idle`, in ms (MCP-16). */
  sessionIdleMs?: number;
  /** `--max-sessions` (MCP-16). */
  maxSessions?: number;
}

/** The options of delegate-mcp's own, each taking a value; the rest are delegate-run's. */
const OWN_OPTIONS = ['--http', '--session-idle', '--max-sessions'] as const;
type OwnOption = (typeof OWN_OPTIONS)[number];

/** Takes delegate-mcp's own options (`--http <port>`, `--session-idle <seconds>`, `--max-sessions <n>`) out of the arguments. */
function takeOwnOptions(argv: string[]): { rest: string[]; http?: number; sessionIdleMs?: number; maxSessions?: number } {
  const rest: string[] = [];
  const given = new Map<OwnOption, string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--') {
      rest.push(...argv.slice(index));
      break;
    }
    const option = OWN_OPTIONS.find((name) => argument === name || argument.startsWith(`${name}=`));
    if (option === undefined) rest.push(argument);
    else if (argument !== option) given.set(option, argument.slice(option.length + 1));
    else {
      const value = argv[++index];
      if (value === undefined) throw new UsageError(`${option} expects ${option === '--http' ? 'a port' : 'a value'}.`);
      given.set(option, value);
    }
  }
  const http = given.get('--http');
  const idle = given.get('--session-idle');
  const max = given.get('--max-sessions');
  if (http === undefined) {
    const stray = idle === undefined ? (max === undefined ? undefined : '--max-sessions') : '--session-idle';
    if (stray !== undefined) throw new UsageError(`${stray} is only for --http <port>: over stdio there is one client.`);
    return { rest };
  }
  const port = /^\d+$/.test(http) ? Number(http) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--http expects a port from 0 to 65535, got "${http}".`);
  return {
    rest,
    http: port,
    ...(idle === undefined ? {} : { sessionIdleMs: parseTimeoutSeconds(idle, '--session-idle') }),
    ...(max === undefined ? {} : { maxSessions: wholeNumber(max, '--max-sessions', 1) as number }),
  };
}

/** Parses the command line (MCP-8); throws UsageError for anything malformed. */
export function parseMcpArguments(argv: string[], cwd: string): McpArguments | 'help' | 'version' {
  const { rest, ...own } = takeOwnOptions(argv);
  const { values, positionals } = parseWithOptions(rest, OWN_OPTIONS);
  if (values.help) return 'help';
  if (values.version) return 'version';
  for (const [option, why] of Object.entries(SERVER_REFUSED_OPTIONS))
    if (values[option as keyof typeof SERVER_REFUSED_OPTIONS] !== undefined) throw new UsageError(`--${option} is not an option of delegate-mcp: ${why}.`);
  if (values.approve === 'interactive') throw new UsageError('--approve interactive needs a terminal, and delegate-mcp has none; use approve_all or strict.');
  const run = parseArguments(positionals.length === 0 ? [...rest, DEFAULT_SOURCE] : rest, cwd);
  if (run === 'help' || run === 'version') return run;
  return { run, source: run.request, ...own };
}

/** Where the source is, checked before anything is served: a URL, or a folder that exists. */
async function sourceFor(args: McpArguments, runtime: DelegatingRuntime, cwd: string): Promise<RequestSource> {
  if (isHttpUrl(args.source)) return catalogSource(args.source, runtime.resolvers.get<UrlResolver>('url') as UrlResolver);
  const root = resolve(cwd, args.source);
  const found = await stat(root).catch(() => undefined);
  if (!found?.isDirectory())
    throw new UsageError(`Expected "${args.source}" to be a folder of Request documents or a catalog URL, but ${root} is ${found ? 'a file' : 'missing'}.`);
  return folderSource(root);
}

/** Runs one Request for a tool call as delegate-run runs one (MCP-11), its approvals by the --approve mode (nobody is at a terminal to ask). */
function runnerFor(args: McpArguments, io: CliIo, runtime: DelegatingRuntime, session: RunSession, say: (line: string) => void) {
  const run = servedRunner(args.run, io, runtime, session, say);
  return (request: ListedRequest, input: unknown, call: ToolCallRun): Promise<RunResult> =>
    run(request.reference, input, { ...call, confirm: createApprovalHook({ mode: args.run.approve ?? 'strict' }) });
}

/** Where `main` reads, writes and is stopped; defaults are the real process's. */
export interface McpCommandIo extends CliIo {
  /** The stdio transport's streams (default: the process's); tests never use stdio in-process. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Called once the HTTP server listens. */
  onListening?: (server: { url: string }) => void;
}

/** Runs delegate-mcp; resolves with the exit status once the server stopped (MCP-8). */
export async function main(argv: string[], io: McpCommandIo): Promise<number> {
  const say = (line: string) => void io.stderr.write(`${line}\n`);
  const args = subcommandArguments(
    () => parseMcpArguments(argv, io.cwd),
    USAGE,
    io.stdout,
    (line) => say(`delegate-mcp: ${line}`),
  );
  if (typeof args === 'number') return args;
  const session = new RunSession();
  let tools: RequestTools | undefined;
  try {
    const isUrl = isHttpUrl(args.source);
    const root = args.run.root ? resolve(io.cwd, args.run.root) : isUrl ? io.cwd : resolve(io.cwd, args.source);
    const allowHosts = [...args.run.allowHosts, ...(isUrl ? [new URL(args.source).host] : [])];
    const activities = await loadActivities(args.run.activities, io.cwd);
    const catalog = ModelCatalog.load({ env: io.env, cwd: io.cwd });
    const runtime = runtimeFor(args.run, io, { root, allowHosts, activities, catalog });
    session.runtime = runtime;
    // Every delegation of every call becomes a job for delegate-worker processes (MCP-24, QUEUE-1); Redis is reached now or never.
    if (args.run.queue !== undefined) {
      session.queue = await (await import('../queue/queue-child-runner.js')).QueueChildRunner.connect(queueOptions(args.run, io.env, say));
      runtime.useChildRunner(session.queue);
    }
    const source = await sourceFor(args, runtime, io.cwd);
    session.sink = openCheckedTrace(args.run, io.cwd);
    // Spans to a collector when --otel or the standard variables say so (TEL-1); stdout stays the MCP channel.
    session.telemetry = await startTelemetry(args.run, io.env, 'delegate-mcp', (line) => say(`delegate-mcp: ${line}`));
    tools = new RequestTools({ source, run: runnerFor(args, io, runtime, session, say), log: say });
    const listed = await tools.tools();
    say(`delegate-mcp: ${listed.size} Request${listed.size === 1 ? '' : 's'} of ${args.source} as tools: ${[...listed.keys()].join(', ') || 'none'}.`);
  } catch (error) {
    await tools?.close();
    await session.close();
    const message = error instanceof ProtocolError || error instanceof Error ? error.message : String(error);
    say(`delegate-mcp: ${message}`);
    return EXIT.usage;
  }
  const status = args.http === undefined ? await serveStdio(tools, io) : await serveHttp(tools, args, args.http, io, say);
  await tools.close();
  await session.close();
  return status;
}

/**
 * Serves over stdio until the client closes its end, then lets the calls in flight finish and
 * answer (the caller waits for them), or until the command is stopped, which cancels them (MCP-8).
 */
async function serveStdio(tools: RequestTools, io: McpCommandIo): Promise<number> {
  const stdin = (io.stdin ?? process.stdin) as NodeJS.ReadableStream;
  const transport = new StdioServerTransport(stdin as never, io.stdout as never);
  await tools.createServer().connect(transport);
  await new Promise<void>((done) => {
    // After the last data: the requests it carried are in flight (and awaited) before serving stops.
    const ended = () => setImmediate(done);
    stdin.once('end', ended);
    stdin.once('close', ended);
    if (io.signal?.aborted) done();
    io.signal?.addEventListener('abort', () => done(), { once: true });
  });
  return EXIT.ok;
}

/** Serves Streamable HTTP on 127.0.0.1 until the command is stopped (MCP-14), its sessions bounded (MCP-16). */
async function serveHttp(tools: RequestTools, args: McpArguments, port: number, io: McpCommandIo, say: (line: string) => void): Promise<number> {
  const handler = createMcpHttpHandler(() => tools.createServer(), {
    ...(args.sessionIdleMs === undefined ? {} : { idleMs: args.sessionIdleMs }),
    ...(args.maxSessions === undefined ? {} : { maxSessions: args.maxSessions }),
  });
  let server: RunningServer;
  try {
    server = await serve((request) => handler.handle(request), { port, host: '127.0.0.1' });
  } catch (error) {
    say(`delegate-mcp: could not listen on 127.0.0.1:${port}: ${(error as Error).message}`);
    return EXIT.failed;
  }
  say(`delegate-mcp: serving at ${server.url}${MCP_PATH} (Ctrl-C to stop)`);
  io.onListening?.({ url: `${server.url}${MCP_PATH}` });
  await new Promise<void>((done) => {
    if (io.signal?.aborted) done();
    io.signal?.addEventListener('abort', () => done(), { once: true });
  });
  await handler.close();
  await server.close({ force: true });
  return EXIT.ok;
}

/** The signals that stop the server, cancelling the runs in flight (CLI-13). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

if (isEntryPoint(import.meta.url)) {
  const controller = new AbortController();
  for (const name of STOP_SIGNALS) {
    process.on(name, () => {
      // The first signal cancels the runs and stops the server; a second quits at once.
      if (controller.signal.aborted) process.exit(EXIT.cancelled);
      controller.abort();
    });
  }
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: controller.signal }).then(
    // The last answers are written to a pipe first: exit once stdout has taken them.
    (status) => void process.stdout.write('', () => process.exit(status)),
    (error: unknown) => {
      process.stderr.write(`delegate-mcp: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(EXIT.failed);
    },
  );
}
