/** MCP client connections kept per run tree (MCP-4, MCP-6): started once, shared by the tree's runs, closed when the tree ends. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { abortable } from '../protocol/cancellation.js';
import type { McpToolsetMessage } from '../protocol/messages/toolset.js';
import { compileSchema, describeErrors, formatIssues, schemaProblem } from '../protocol/schemas.js';
import type { JsonSchema } from '../protocol/types.js';
import { boundedHttpFetch } from './bounded-http-fetch.js';
import type { LineReader } from './bounded-line-reader.js';
import { mcpToolSchema } from './mcp-tools.js';
import { bytesInWords } from './oversized-answer.js';

/** How long starting a server and listing its tools may take before it counts as failed to start (MCP-4). */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;
/** How long one tool call may go without an answer or a progress notification (MCP-5). */
export const MCP_CALL_TIMEOUT_MS = 600_000;
/** How many tools a server may list: past it, the listing fails (MCP-19). */
export const MCP_MAX_TOOLS = 1000;
/** How many bytes of JSON a server's listed tools may span together: past it, the listing fails (MCP-19). */
export const MCP_MAX_LISTING_BYTES = 4 * 1024 * 1024;
/** How many bytes one message of a server (a call's answer, a page of its listing) may hold, unless the toolset says `maxResultBytes` (MCP-20). */
export const MCP_MAX_RESULT_BYTES = 10 * 1024 * 1024;
/** How much of a stdio server's last standard error is kept to explain its failure (MCP-6). */
const STDERR_TAIL_CHARS = 2000;
/**
 * How long closing waits for a stdio server's process to be gone before it kills it: the SDK ends
 * its input, sends SIGTERM after 2 s and SIGKILL after 2 s more (MCP-4).
 */
const SERVER_EXIT_MS = 5000;
/** How long a server at a URL may take to answer the end of its session before it is left without an answer (MCP-4). */
const SESSION_END_MS = 5000;

/** Where a server is: a command started on stdio, or a URL (MCP-2). */
export type McpServerSpec = Pick<McpToolsetMessage, 'command' | 'args' | 'env' | 'url' | 'maxResultBytes'> & {
  /** The folder a command starts in. */
  cwd?: string;
};

/** One server's connection in one run tree: its tools once listed, or why it is unusable. */
export interface McpConnection {
  /** The server in words, for messages: its command line or URL. */
  readonly label: string;
  /** The tools it listed whose schemas compile; empty when it failed to start. */
  readonly tools: readonly Tool[];
  /** The tools it listed that are left out, each with why: its input or output schema does not compile (MCP-21). */
  readonly leftOut: readonly LeftOutTool[];
  /** Why it cannot be called (failed to start, or closed since), or undefined while it is up. */
  failure(): string | undefined;
  /** The SDK client, while the server is up. */
  readonly client: Client | undefined;
}

/** A listed tool left out of a run's tools, and why (MCP-21). */
export interface LeftOutTool {
  tool: string;
  message: string;
}

/** The key of a server within a tree: the same command, arguments, environment and folder, or the same URL, is the same server (MCP-4). */
export function serverKey(spec: McpServerSpec): string {
  // The bound of its messages is read on the connection itself, so two bounds are two connections (MCP-20).
  const limit = spec.maxResultBytes ?? MCP_MAX_RESULT_BYTES;
  return spec.url !== undefined
    ? JSON.stringify({ url: spec.url, limit })
    : JSON.stringify({ command: spec.command, args: spec.args ?? [], env: spec.env ?? {}, cwd: spec.cwd ?? null, limit });
}

/** The server in words: its command line or its URL. */
export function serverLabel(spec: McpServerSpec): string {
  return spec.url ?? [spec.command, ...(spec.args ?? [])].join(' ');
}

/**
 * Every tool a server lists, page by page (MCP-19): past {@link MCP_MAX_TOOLS} tools or
 * {@link MCP_MAX_LISTING_BYTES} bytes of them the listing fails at once, before a later page is asked
 * for. Pages are asked for directly rather than through the SDK's `listTools`, which compiles the
 * output schema of every tool of a page before anyone could bound them.
 */
async function listAllTools(client: Client, signal: AbortSignal): Promise<Tool[]> {
  const tools: Tool[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  // The SDK (and zod under it) is loaded by a run with an mcp toolset only (CLI-34).
  const { ListToolsResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  do {
    const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, {
      signal,
      timeout: MCP_CONNECT_TIMEOUT_MS,
    });
    for (const tool of page.tools) {
      if (tools.length === MCP_MAX_TOOLS)
        throw new Error(`it lists more than ${MCP_MAX_TOOLS.toLocaleString('en-US')} tools, the most a server may list (MCP-19)`);
      bytes += Buffer.byteLength(JSON.stringify(tool));
      if (bytes > MCP_MAX_LISTING_BYTES)
        throw new Error(`its tools span more than ${bytesInWords(MCP_MAX_LISTING_BYTES)} of JSON, the most a listing may (MCP-19)`);
      tools.push(tool);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/**
 * The listed tools split into those whose input schema (as the tool's parameters) and output schema
 * compile, and those left out with the compiler's message (MCP-21).
 */
function checkedTools(tools: readonly Tool[], key: string): { tools: Tool[]; leftOut: LeftOutTool[] } {
  const kept: Tool[] = [];
  const leftOut: LeftOutTool[] = [];
  for (const tool of tools) {
    const input = schemaProblem(mcpToolSchema(tool, key));
    const output = tool.outputSchema === undefined ? undefined : schemaProblem(tool.outputSchema);
    if (input === undefined && output === undefined) kept.push(tool);
    else
      leftOut.push({
        tool: tool.name,
        message: `The MCP tool ${JSON.stringify(tool.name)} is left out: its ${input === undefined ? 'output' : 'input'} schema does not compile. ${input ?? output}`,
      });
  }
  return { tools: kept, leftOut };
}

/**
 * The SDK's validator of tools' structured results, compiling as the run compiles every schema: a
 * schema that does not compile fails the result it checks, saying why, instead of throwing (MCP-21).
 */
const outputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: unknown) {
    const problem = schemaProblem(schema);
    const validate = problem === undefined ? compileSchema(schema as JsonSchema) : undefined;
    return (input: unknown) =>
      validate?.(input)
        ? { valid: true as const, data: input as T, errorMessage: undefined }
        : { valid: false as const, data: undefined, errorMessage: problem ?? formatIssues(describeErrors(validate?.errors)) };
  },
};

/** A live connection: the client, the transport, and what is known of why it ended. */
class OpenConnection implements McpConnection {
  tools: readonly Tool[] = [];
  leftOut: readonly LeftOutTool[] = [];
  client: Client | undefined;
  private ended: string | undefined;
  private stderrTail = '';
  /** Ends the session a Streamable HTTP server keeps for this connection (MCP-4). */
  private endSession: (() => Promise<void>) | undefined;
  /** The process of a stdio server, once started: closing waits until it is gone (MCP-4). */
  private serverPid: number | undefined;

  constructor(
    readonly label: string,
    private readonly spec: McpServerSpec,
  ) {}

  failure(): string | undefined {
    return this.ended;
  }

  /** Starts (or reaches) the server and lists its tools; on failure the connection keeps why. */
  async open(signal: AbortSignal): Promise<void> {
    // The SDK loads only when a run uses a server, so runs without one start as fast as before.
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const transport = await this.transport();
    const client = new Client({ name: 'delegate-run', version: '0.1.0' }, { capabilities: {}, jsonSchemaValidator: outputValidator });
    client.onclose = () => this.end('it closed the connection');
    // Starting and listing share one deadline, so no run of pages outlasts it (MCP-4, MCP-19).
    const within = AbortSignal.any([signal, AbortSignal.timeout(MCP_CONNECT_TIMEOUT_MS)]);
    try {
      await client.connect(transport, { signal: within, timeout: MCP_CONNECT_TIMEOUT_MS });
      const checked = checkedTools(await listAllTools(client, within), serverKey(this.spec));
      this.tools = checked.tools;
      this.leftOut = checked.leftOut;
      // The SDK checks structured results against the output schemas of the tools it was told of.
      (client as unknown as { cacheToolMetadata(tools: Tool[]): void }).cacheToolMetadata(checked.tools);
      // Only now may calls go to it: a close before this is a failure to start.
      if (this.ended === undefined) this.client = client;
    } catch (error) {
      this.end((error as Error).message);
      await client.close().catch(() => undefined);
    }
  }

  /** Closes the connection (a stdio server is stopped); later calls are refused. */
  async close(): Promise<void> {
    const client = this.client;
    this.end('the run tree that started it ended');
    // A server at a URL outlives the tree: it is told the session is over before the client closes,
    // if it answers within 5 s; closing the client then cancels a goodbye it never answered.
    if (this.endSession) await abortable(this.endSession(), AbortSignal.timeout(SESSION_END_MS), () => new Error('no answer')).catch(() => undefined);
    await client?.close().catch(() => undefined);
    // A server that failed to start was let go by the SDK without anyone waiting for it to stop: a
    // command line exiting as the run ends would leave one that ignores SIGTERM running for ever.
    if (this.serverPid !== undefined) await processGone(this.serverPid, SERVER_EXIT_MS);
  }

  private end(reason: string): void {
    this.client = undefined;
    if (this.ended !== undefined) return;
    const said = this.stderrTail.trim();
    this.ended = said === '' ? reason : `${reason}; it last wrote: ${said.slice(-STDERR_TAIL_CHARS)}`;
  }

  /** The most bytes one message of the server may hold (MCP-20). */
  private limit(): number {
    return this.spec.maxResultBytes ?? MCP_MAX_RESULT_BYTES;
  }

  private async transport(): Promise<Transport> {
    if (this.spec.url !== undefined) {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      // No stream is resumed: a call's stream that ends or breaks before its answer fails the call (MCP-18).
      const transport = new StreamableHTTPClientTransport(new URL(this.spec.url), {
        fetch: boundedHttpFetch(this.limit()),
        reconnectionOptions: { initialReconnectionDelay: 1000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 0 },
      });
      this.endSession = () => transport.terminateSession();
      return transport;
    }
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { BoundedLineReader } = await import('./bounded-line-reader.js');
    const transport = new StdioClientTransport({
      command: this.spec.command as string,
      args: this.spec.args ?? [],
      ...(this.spec.env === undefined ? {} : { env: this.spec.env }),
      ...(this.spec.cwd === undefined ? {} : { cwd: this.spec.cwd }),
      stderr: 'pipe',
      maxBufferSize: this.limit(),
    });
    // The SDK's reader closes the whole connection when the bytes it holds pass its limit, failing
    // every call as unreachable; this one fails only the call whose answer is too long (MCP-20).
    if ('_readBuffer' in transport) (transport as unknown as { _readBuffer: LineReader })._readBuffer = new BoundedLineReader(this.limit());
    // Its process id is read once it runs, while the SDK still holds it.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.serverPid = transport.pid ?? undefined;
    };
    // What the server says on stderr explains a crash; only the tail is kept.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }
}

/** Resolves once process `pid` has exited, or after `withinMs`, when it is killed (SIGKILL). */
async function processGone(pid: number, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      // Signal 0 only asks whether the process is there.
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() >= until) break;
    await new Promise((wake) => setTimeout(wake, 50));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone in the meantime.
  }
}

/**
 * The MCP connections of every live run tree, by tree (its top run's id) and server (MCP-4): the
 * first run of a tree that needs a server starts it, the others share it, and {@link closeTree}
 * closes them all when the tree ends (LOOP-19).
 */
export class McpConnections {
  private readonly trees = new Map<string, Map<string, Promise<OpenConnection>>>();

  /** The connection to `spec` in `tree`, started (and its tools listed) on first use; never rejects. */
  connect(tree: string, spec: McpServerSpec, signal: AbortSignal): Promise<McpConnection> {
    let servers = this.trees.get(tree);
    if (!servers) {
      servers = new Map();
      this.trees.set(tree, servers);
    }
    const key = serverKey(spec);
    let connection = servers.get(key);
    if (!connection) {
      const opening = new OpenConnection(serverLabel(spec), spec);
      connection = opening.open(signal).then(() => opening);
      servers.set(key, connection);
    }
    return connection;
  }

  /** The connection a tool of `tree` names by its server key, if the tree started it. */
  find(tree: string, key: string): Promise<McpConnection> | undefined {
    return this.trees.get(tree)?.get(key);
  }

  /** Closes every server the tree started (LOOP-19, MCP-6). */
  async closeTree(tree: string): Promise<void> {
    const servers = this.trees.get(tree);
    if (!servers) return;
    this.trees.delete(tree);
    await Promise.all([...servers.values()].map(async (connection) => (await connection).close()));
  }

  /** The trees with servers open, for tests and diagnostics. */
  openTrees(): string[] {
    return [...this.trees.keys()];
  }
}
