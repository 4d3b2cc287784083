/** The `toolset` message (FILES-1 to FILES-3, MCP-1 to MCP-3): a built-in set of tools; `files` offers confined sandboxes, `mcp` an MCP server's tools. */
import { fileTools, LIST_FILES_ACTIVITY, SANDBOXES_PROPERTY, type SandboxSpec } from '../file-tools.js';
import { defineHandler, type MessageProblem } from '../handlers.js';
import { pointer } from '../json.js';
import { metaConst } from '../tools.js';
import { isJsonObject, type BaseMessage, type Message, type ToolSchema } from '../types.js';
import { messageSchema } from './message-schema.js';

/** The `files` toolset with named sandboxes (FILES-2). */
export interface FilesToolsetMessage extends BaseMessage {
  type: 'toolset';
  toolset: 'files';
  /** Sandboxes by name: each a folder relative to the document's folder. */
  sandboxes: Record<string, SandboxSpec>;
}

/** The `mcp` toolset: the tools of a Model Context Protocol server (MCP-1 to MCP-3). */
export interface McpToolsetMessage extends BaseMessage {
  type: 'toolset';
  toolset: 'mcp';
  /** The command that starts a stdio server; exactly one of `command` and `url` is given (MCP-2). */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** The http(s) URL of a Streamable HTTP server. */
  url?: string;
  /** The server's tools offered: names or globs, or `"*"` (the default). */
  allow?: '*' | string[];
  /** Put before each offered tool's name (MCP-3). */
  prefix?: string;
  /** The most bytes one answer of the server may hold (default 10 MiB, MCP-20). */
  maxResultBytes?: number;
}

/** A toolset message: `files` or `mcp`. */
export type ToolsetMessage = FilesToolsetMessage | McpToolsetMessage;

/** Problems of an `mcp` toolset its schema cannot say (MCP-2): exactly one of `command` and `url`, an http(s) URL, `args` and `env` only with a command. */
function mcpProblems(message: McpToolsetMessage): MessageProblem[] {
  if ((message.command === undefined) === (message.url === undefined))
    return [{ pointer: '', message: 'Expected exactly one of "command" (a server started on stdio) and "url" (a Streamable HTTP server).' }];
  if (message.url !== undefined && !/^https?:\/\/[^/]/i.test(message.url))
    return [{ pointer: '/url', message: `Expected an http(s) URL of a Streamable HTTP server, got "${message.url}".` }];
  const stray = (['args', 'env'] as const).filter((key) => message.url !== undefined && message[key] !== undefined);
  return stray.map((key) => ({ pointer: `/${key}`, message: `Expected "${key}" only beside "command": a server at a URL is not started by this run.` }));
}

const SANDBOX_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Problems of a sandbox's path its schema cannot say (FILES-2): it must be a plain relative path. */
function pathProblem(path: string): string | undefined {
  if (path.includes('\0') || path.includes('\\') || path.includes('%')) return 'a plain relative path with "/" between folders (no NUL, backslash or "%")';
  if (path.startsWith('/') || /^[a-z]:/i.test(path)) return "a path relative to the document's folder, not an absolute one";
  return undefined;
}

/** The handler of `toolset`. */
export const toolsetHandler = defineHandler<ToolsetMessage>({
  type: 'toolset',
  schema: messageSchema('toolset'),
  check(message) {
    if (message.toolset === 'mcp') return mcpProblems(message);
    const problems: MessageProblem[] = [];
    for (const [name, sandbox] of Object.entries(message.sandboxes)) {
      if (!SANDBOX_NAME.test(name)) {
        problems.push({ pointer: pointer('sandboxes', name), message: `Expected a sandbox name to be an identifier (letters, digits, "_"), got "${name}".` });
      }
      const problem = pathProblem(sandbox.path);
      if (problem) problems.push({ pointer: pointer('sandboxes', name, 'path'), message: `Expected ${problem}, got "${sandbox.path}".` });
    }
    return problems;
  },
  tools(message, defined): Record<string, ToolSchema> {
    // An MCP server's tools are known only once it answers: the runtime's preparer offers them (MCP-3).
    if (message.toolset === 'mcp') return {};
    // Sandboxes of an earlier files toolset stay reachable; a later one of the same name wins (FILES-2).
    const previous = defined.get('list_files');
    const earlier = previous !== undefined && metaConst(previous, '_activity') === LIST_FILES_ACTIVITY ? metaConst(previous, SANDBOXES_PROPERTY) : undefined;
    return fileTools({ ...(isJsonObject(earlier) ? (earlier as unknown as Record<string, SandboxSpec>) : {}), ...message.sandboxes });
  },
});

/**
 * The `files` sandboxes a context declares, merged in order as the tools merge them (a later
 * sandbox of one name wins, FILES-2): where a delegating call's `<sandbox>/…` attachment paths
 * are read from (ATT-2).
 */
export function contextSandboxes(context: readonly Message[]): Record<string, SandboxSpec> {
  const sandboxes: Record<string, SandboxSpec> = {};
  for (const message of context)
    if (message.type === 'toolset' && (message as ToolsetMessage).toolset === 'files') Object.assign(sandboxes, (message as ToolsetMessage).sandboxes);
  return sandboxes;
}
