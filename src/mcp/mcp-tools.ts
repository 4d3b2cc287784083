/** An MCP server's tools as the protocol's tools (MCP-3) and its call results as call results (MCP-5). */
import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema, ToolSchema } from '../protocol/types.js';

/** The built-in Activity behind every MCP tool (MCP-5). */
export const MCP_ACTIVITY = '@mcp';
/** The meta-property fixing which server and which of its tools a call goes to, filled into every call (MCP-3). */
export const MCP_TARGET_PROPERTY = '_mcp';

/** What `_mcp` holds: the server's key within the run tree and the tool's name on the server. */
export interface McpTarget {
  server: string;
  tool: string;
}

/** The tool names every model provider accepts (OpenAI's function names are the narrowest): what an offered name must be (MCP-22). */
export const PROVIDER_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** How long an offered tool name may be. */
const MAX_NAME = 64;

/**
 * The names the tools named `names` (a server's, in listing order) are offered under, by name on the
 * server (MCP-22): `prefix` + the name when that is 1 to 64 letters, digits, `_` or `-`; else a safe
 * name made of it, every other character replaced by `_`, cut to fit, and `_` with the first 8 hex
 * digits of the name's SHA-256 after it (`tool` stands for an empty name). A safe name never takes
 * one the listing already gives or another safe name took: it then ends in `_2`, `_3`, …. The same
 * listing and prefix always give the same names.
 */
export function offeredToolNames(names: readonly string[], prefix: string): Map<string, string> {
  const offered = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of names)
    if (PROVIDER_TOOL_NAME.test(prefix + name)) {
      offered.set(name, prefix + name);
      taken.add(prefix + name);
    }
  for (const name of names) {
    if (offered.has(name)) continue;
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
    const stem = prefix + (name.replace(/[^A-Za-z0-9_-]/g, '_') || 'tool');
    let safe = `${stem.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
    for (let count = 2; taken.has(safe); count++) {
      const suffix = `_${hash}_${count}`;
      safe = stem.slice(0, MAX_NAME - suffix.length) + suffix;
    }
    offered.set(name, safe);
    taken.add(safe);
  }
  return offered;
}

/** The parameters of a tool whose server failed to start: anything, since its schema is unknown (MCP-6). */
const UNKNOWN_PARAMETERS: JsonSchema = { type: 'object' };

/**
 * The protocol tool for one MCP tool (MCP-3): its description, its input schema as parameters
 * (`$schema` dropped), `_activity` fixed to the MCP Activity and `_mcp` to where the call goes;
 * `unavailable` (why the server cannot be reached) is said in the description of a tool offered
 * without its server's listing (MCP-6).
 */
export function mcpToolSchema(tool: Pick<Tool, 'name' | 'description' | 'inputSchema'> | { name: string }, server: string, unavailable?: string): ToolSchema {
  const input = 'inputSchema' in tool ? (tool.inputSchema as JsonSchema) : UNKNOWN_PARAMETERS;
  const { $schema: _schema, type: _type, properties = {}, required, ...rest } = input as Record<string, unknown>;
  const described = 'description' in tool && typeof tool.description === 'string' && tool.description !== '' ? tool.description : undefined;
  const description = unavailable === undefined ? described : `${described ?? tool.name} (unavailable: ${unavailable})`;
  const target: McpTarget = { server, tool: tool.name };
  return {
    ...(rest as Record<string, unknown>),
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties: {
      ...(properties as Record<string, JsonSchema>),
      _activity: { const: MCP_ACTIVITY },
      [MCP_TARGET_PROPERTY]: { const: target },
    },
    ...(Array.isArray(required) && required.length > 0 ? { required: required as string[] } : {}),
  } as ToolSchema;
}

/**
 * A tool result as the call's result (MCP-5): the structured content when the server gives it;
 * else the text of its text parts, joined by blank lines; else (images, audio, resources only)
 * the content parts themselves.
 */
export function callResultOf(result: Pick<CallToolResult, 'content' | 'structuredContent'>): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  const texts = content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
  return texts.length > 0 || content.length === 0 ? texts.join('\n\n') : content;
}

/** The text of a tool result the server marked as an error (MCP-5), for the call's error. */
export function errorTextOf(result: Pick<CallToolResult, 'content'>): string {
  const texts = (result.content ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : []));
  return texts.length > 0 ? texts.join('\n') : 'the tool reported an error and said nothing more';
}
