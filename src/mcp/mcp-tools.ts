/** An MCP server's tools as the protocol's tools (MCP-3) and its call results as call results (MCP-5). */
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
