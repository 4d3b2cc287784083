/** The MCP preparer (MCP-3, MCP-4): before a run starts, each `mcp` toolset becomes the tools of its server, connected once per run tree. */
import { dirname, isAbsolute } from 'node:path';
import { RequestError, type Problem } from '../protocol/errors.js';
import { pointer } from '../protocol/json.js';
import type { LoadedRequest } from '../protocol/load-request.js';
import type { McpToolsetMessage } from '../protocol/messages/toolset.js';
import { isAllowedWorker } from '../protocol/messages/workers.js';
import { isReservedToolName } from '../protocol/reserved-tools.js';
import type { RunInfo, RunOptions, RunPreparer, Runtime } from '../protocol/runtime.js';
import { RunTrace, Tracer } from '../protocol/trace.js';
import type { Message, ToolMessage, ToolSchema } from '../protocol/types.js';
import { definedTools } from '../activities/workers-preparer.js';
import { type McpConnection, type McpConnections, type McpServerSpec, serverKey } from './mcp-connections.js';
import { mcpToolSchema, offeredToolNames } from './mcp-tools.js';

function isMcpToolset(message: Message): message is McpToolsetMessage {
  return message.type === 'toolset' && (message as { toolset?: unknown }).toolset === 'mcp';
}

/** Where the server of a toolset is; a command starts in the folder of the document that declares it, else the root (MCP-2). */
function serverSpec(message: McpToolsetMessage, location: string, root: string): McpServerSpec {
  const bound = message.maxResultBytes === undefined ? {} : { maxResultBytes: message.maxResultBytes };
  if (message.url !== undefined) return { url: message.url, ...bound };
  return {
    ...bound,
    command: message.command as string,
    ...(message.args === undefined ? {} : { args: message.args }),
    ...(message.env === undefined ? {} : { env: message.env }),
    cwd: isAbsolute(location) ? dirname(location) : root,
  };
}

/**
 * The tools one toolset offers (MCP-3, MCP-6): the allowed tools the server listed, or, when it could
 * not be reached, the names `allow` spells out (globs match nothing then), each failing its calls;
 * each under a name every model provider accepts (MCP-22).
 */
function offeredTools(message: McpToolsetMessage, connection: McpConnection | UnreachableServer, key: string): Record<string, ToolSchema> {
  const allow = message.allow ?? '*';
  const tools: Record<string, ToolSchema> = {};
  const failure = connection.failure();
  if (failure !== undefined) {
    const unavailable = `the MCP server ${connectionLabel(message)} cannot be reached: ${failure}`;
    const named = (Array.isArray(allow) ? allow : []).filter((name) => !name.includes('*'));
    const names = offeredToolNames(named, message.prefix ?? '');
    for (const name of named) tools[names.get(name) as string] = mcpToolSchema({ name }, key, unavailable);
    return tools;
  }
  const allowed = connection.tools.filter((tool) => isAllowedWorker(allow, tool.name));
  const names = offeredToolNames(
    allowed.map((tool) => tool.name),
    message.prefix ?? '',
  );
  for (const tool of allowed) tools[names.get(tool.name) as string] = mcpToolSchema(tool, key);
  return tools;
}

/** A server this run may not start or reach (MCP-7): no tools, and why. */
interface UnreachableServer {
  failure(): string;
  tools: [];
  leftOut: [];
}

function connectionLabel(message: McpToolsetMessage): string {
  return `"${message.url ?? [message.command, ...(message.args ?? [])].join(' ')}"`;
}

/** Options of {@link createMcpPreparer}. */
export interface McpPreparerOptions {
  /** The connections of every run tree. */
  connections: McpConnections;
  /** The runtime's root: where a command starts for a document that is not a file. */
  root: string;
}

/**
 * A run preparer that turns every `mcp` toolset into a `tool` message at its place (MCP-3): the
 * server is started or reached once per run tree (MCP-4) and its allowed tools offered under their
 * names (with `prefix`). A name that collides with another tool or a reserved one is an
 * `invalid_request` before the first model call; a server that cannot be reached is not: the run goes
 * on, its spelled-out tools failing their calls (MCP-6). A document that is not trusted to run
 * local Activities starts no server (MCP-7).
 */
export function createMcpPreparer(options: McpPreparerOptions): RunPreparer {
  return async (request: LoadedRequest, runOptions: RunOptions, runtime: Runtime, run: RunInfo): Promise<LoadedRequest> => {
    if (!request.document.context.some(isMcpToolset)) return request;
    const problems: Problem[] = [];
    const defined = definedTools(request.document.context, runtime.handlers);
    const tree = run.root ?? run.id;
    const trace = new RunTrace(runOptions.tracer ?? new Tracer(), run.id, run.parent, run.depth);
    const context: Message[] = [];
    for (const [index, message] of request.document.context.entries()) {
      if (!isMcpToolset(message)) {
        context.push(message);
        continue;
      }
      const at = pointer('context', index);
      const spec = serverSpec(message, request.location, options.root);
      const key = serverKey(spec);
      const connection: McpConnection | UnreachableServer = run.trusted
        ? await options.connections.connect(tree, spec, runOptions.signal ?? new AbortController().signal)
        : { failure: () => 'the document is not trusted to run local Activities, so it starts or reaches no MCP server', tools: [], leftOut: [] };
      const failure = connection.failure();
      const server = connectionLabel(message).slice(1, -1);
      if (failure === undefined) trace.emit('mcp.connected', { server, tools: connection.tools.map((tool) => tool.name) });
      else trace.emit('mcp.failed', { server, message: failure });
      for (const { tool, message: why } of connection.leftOut) trace.emit('mcp.failed', { server, tool, message: why });
      const tools = offeredTools(message, connection, key);
      for (const name of Object.keys(tools)) {
        const earlier = defined.get(name);
        if (isReservedToolName(name))
          problems.push({
            document: request.location,
            pointer: at,
            message: `Expected the MCP tool "${name}" not to take the name of a built-in tool; give the toolset a "prefix".`,
          });
        else if (earlier)
          problems.push({
            document: request.location,
            pointer: at,
            message: `Expected the MCP tool "${name}" not to collide with ${earlier.what} defined at ${earlier.pointer}; give the toolset a "prefix".`,
          });
        defined.set(name, { pointer: at, what: `the MCP tool "${name}"` });
      }
      context.push({ type: 'tool', tool: tools } as ToolMessage);
    }
    if (problems.length > 0) throw new RequestError(problems);
    return { ...request, document: { ...request.document, context } };
  };
}
