/** A served Request as an MCP tool (MCP-9, MCP-10): its name, its schemas made MCP's object schemas, and the run's input and output mapped across. */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { notJsonPlaceholder, toJsonData } from '../protocol/json-data.js';
import type { JsonSchema } from '../protocol/types.js';
import type { CatalogEntry } from '../server/validate-document.js';

/** The characters an MCP tool name may hold; any other becomes `_` (MCP-9). */
const TOOL_NAME_CHARACTER = /[^A-Za-z0-9_.-]/g;
/** The longest tool name MCP clients accept. */
const MAX_TOOL_NAME = 128;

/** One Request a `delegate-mcp` source lists: its catalog entry and where a run loads it from. */
export interface ListedRequest {
  entry: Omit<CatalogEntry, 'path'>;
  /** An absolute file path or a URL, as `delegate-run` takes it. */
  reference: string;
}

/** One Request as a tool: the MCP tool and how its arguments and output map to the run's. */
export interface RequestTool {
  tool: Tool;
  request: ListedRequest;
  /** True when the input schema was wrapped as `{input}` (it is not an object schema, or there is none). */
  wrapsInput: boolean;
  /** True when the output schema was wrapped as `{output}` (it is not an object schema). */
  wrapsOutput: boolean;
}

/** Whether a schema describes only objects: MCP's input and output schemas must (MCP-10). */
function isObjectSchema(schema: JsonSchema | null): schema is JsonSchema {
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object';
}

/** A Request's tool name (MCP-9): its name with characters MCP refuses replaced by `_`, at most 128 long. */
export function requestToolName(name: string): string {
  return name.replace(TOOL_NAME_CHARACTER, '_').slice(0, MAX_TOOL_NAME) || '_';
}

/**
 * The tool of a Request (MCP-10): `inputSchema` is its declared input schema when that is an object
 * schema, else `{input: <schema>}` (required) and, with none declared, an optional `{input}` of any
 * value; `outputSchema` is its output schema when that is an object schema, else `{output: <schema>}`.
 */
export function requestTool(request: ListedRequest): RequestTool {
  const { entry } = request;
  const wrapsInput = !isObjectSchema(entry.input);
  const inputSchema = isObjectSchema(entry.input)
    ? entry.input
    : entry.input === null
      ? { type: 'object', properties: { input: { description: 'The input of the Request, if it takes one.' } } }
      : { type: 'object', properties: { input: entry.input }, required: ['input'] };
  const wrapsOutput = !isObjectSchema(entry.output);
  const outputSchema = isObjectSchema(entry.output) ? entry.output : { type: 'object', properties: { output: entry.output }, required: ['output'] };
  const tool = {
    name: requestToolName(entry.name),
    ...(entry.description === null ? {} : { description: entry.description }),
    inputSchema,
    outputSchema,
  } as Tool;
  return { tool, request, wrapsInput, wrapsOutput };
}

/** The run's input for a call's arguments (MCP-10): the arguments, or their `input` when the schema was wrapped. */
export function runInputOf(tool: RequestTool, args: Record<string, unknown> | undefined): unknown {
  if (!tool.wrapsInput) return args ?? {};
  return args?.input;
}

/** The structured content of a run's output (MCP-10): the output as JSON data, or `{output}` when the schema was wrapped. */
export function structuredContentOf(tool: RequestTool, output: unknown): Record<string, unknown> {
  const data = toJsonData(output, { replace: notJsonPlaceholder }) ?? null;
  return tool.wrapsOutput ? { output: data } : (data as Record<string, unknown>);
}
