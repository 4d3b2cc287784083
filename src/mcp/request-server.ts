/** The MCP server of `delegate-mcp` (MCP-8 to MCP-13): one tool per Request, each call a run, with progress, cancellation and a list that follows the files. */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { InputError, ProtocolError, UsageError } from '../protocol/errors.js';
import type { RunResult } from '../protocol/contracts.js';
import { Tracer } from '../protocol/trace/trace.js';
import { progressMessage } from '../protocol/trace/progress-message.js';
import type { TraceContext } from '../protocol/trace/trace.js';
import type { RequestSource } from './request-source.js';
import { type ListedRequest, type RequestTool, requestTool, runInputOf, structuredContentOf } from './request-tool.js';

/** What one tool call's run is given: the call's cancellation, the tracer its progress listens to, and the trace context the client sent. */
export interface ToolCallRun {
  signal: AbortSignal;
  tracer: Tracer;
  /** The W3C trace context of the request's `_meta` (`traceparent`, `tracestate`), when the client sent one (TEL-6). */
  traceContext?: TraceContext;
}

/** Options of {@link RequestTools}. */
export interface RequestToolsOptions {
  source: RequestSource;
  /** Runs one Request as `delegate-run` would run it, with the call's input (MCP-11). */
  run(request: ListedRequest, input: unknown, call: ToolCallRun): Promise<RunResult>;
  /** Receives what the server has to say (duplicate names, listing failures). */
  log?: (line: string) => void;
}

/** The `_meta` keys a tool result carries besides its content (MCP-11, MCP-12). */
export const RESULT_META = { run: 'delegate-run/run', usage: 'delegate-run/usage', error: 'delegate-run/error' } as const;

/** A tool error carrying the error's code and message (MCP-12), and the run's id when one started. */
function failedResult(code: string, message: string, run?: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    _meta: { [RESULT_META.error]: { code, message }, ...(run === undefined ? {} : { [RESULT_META.run]: run }) },
  };
}

/**
 * The MCP invalid-params error of arguments the Request's input schema refused (MCP-23): every
 * problem with its pointer into the arguments (below `/input` when the tool wraps its input).
 */
function invalidArguments(tool: RequestTool, error: InputError): McpError {
  const issues = error.issues.map((issue) => ({ ...issue, pointer: tool.wrapsInput ? `/input${issue.pointer}` : issue.pointer }));
  const listed = issues.map((issue) => `${issue.pointer || '/'}: ${issue.message}`).join('; ');
  return new McpError(ErrorCode.InvalidParams, `The arguments of ${tool.tool.name} do not match its input schema: ${listed}`, { code: error.code, issues });
}

/** The tool result of a finished run (MCP-11, MCP-12). */
export function toolResultOf(tool: RequestTool, result: RunResult): CallToolResult {
  if (!result.ok) return failedResult(result.error.code, result.error.message, result.run);
  const structuredContent = structuredContentOf(tool, result.output);
  return {
    content: [{ type: 'text', text: JSON.stringify(tool.wrapsOutput ? structuredContent.output : structuredContent) }],
    structuredContent,
    _meta: { [RESULT_META.run]: result.run, [RESULT_META.usage]: result.usageTotal },
  };
}

/**
 * The tools of a source's Requests, kept current, and the SDK servers that offer them: one per
 * client session (stdio has one). A change of the source that changes the tools is told to every
 * live server as `notifications/tools/list_changed` (MCP-13).
 */
export class RequestTools {
  private current: Promise<Map<string, RequestTool>>;
  private said = '';
  private readonly servers = new Set<Server>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly stopWatching: () => void;
  private readonly log: (line: string) => void;

  constructor(private readonly options: RequestToolsOptions) {
    this.log = options.log ?? (() => undefined);
    this.current = this.load();
    // A source that cannot be listed is said by whoever awaits the tools; never an unhandled rejection.
    this.current.catch(() => undefined);
    this.stopWatching = options.source.watch(() => void this.refresh());
  }

  /** The tools by name, as last listed. */
  tools(): Promise<Map<string, RequestTool>> {
    return this.current;
  }

  /** A new SDK server offering the tools, for one client session; it is told of list changes until it closes. */
  createServer(): Server {
    const server = new Server({ name: 'delegate-mcp', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
    // Every request is tracked from the moment it arrives, so closing waits for its answer (MCP-8).
    server.setRequestHandler(ListToolsRequestSchema, () => this.track(this.current.then((tools) => ({ tools: [...tools.values()].map((tool) => tool.tool) }))));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.track(this.call(request.params, extra)));
    this.servers.add(server);
    server.onclose = () => this.servers.delete(server);
    return server;
  }

  /** Stops following the source, waits for the requests in flight to be answered (runs cancelled by their caller) and closes every server. */
  async close(): Promise<void> {
    this.stopWatching();
    await Promise.allSettled([...this.inFlight]);
    // The answers are sent once their handlers settle: one turn of the event loop lets them go out.
    await new Promise((done) => setImmediate(done));
    await Promise.all([...this.servers].map((server) => server.close().catch(() => undefined)));
  }

  /** Keeps `work` among the requests in flight until it settles. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** One tool call: the Request's run, with progress and cancellation, as a tool result (MCP-11, MCP-12). */
  private async call(params: CallToolRequest['params'], extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> {
    const tool = (await this.current).get(params.name);
    if (!tool) {
      const names = [...(await this.current).keys()];
      throw new McpError(ErrorCode.InvalidParams, `There is no tool "${params.name}"; the tools are ${names.join(', ') || 'none'}.`);
    }
    const tracer = new Tracer();
    const token = params._meta?.progressToken;
    if (token !== undefined) {
      const names = new Map<string, string>();
      let progress = 0;
      tracer.subscribe((event) => {
        if (event.event === 'run.started') names.set(event.run, String(event.name));
        const message = progressMessage(event, names);
        if (message === undefined) return;
        progress += 1;
        const notification: ServerNotification = { method: 'notifications/progress', params: { progressToken: token, progress, message } };
        void extra.sendNotification(notification).catch(() => undefined);
      });
    }
    try {
      const traceContext = traceContextOf(params._meta);
      return toolResultOf(
        tool,
        await this.options.run(tool.request, runInputOf(tool, params.arguments), { signal: extra.signal, tracer, ...(traceContext ? { traceContext } : {}) }),
      );
    } catch (error) {
      // Arguments that do not match the Request's input schema are the client's: invalid params, nothing ran (MCP-23).
      if (error instanceof InputError) throw invalidArguments(tool, error);
      // The Request could not even be loaded or its model chosen: a tool error all the same (MCP-12).
      const failed = error instanceof ProtocolError ? error : new UsageError(error instanceof Error ? error.message : String(error));
      return failedResult(failed.code, failed.message);
    }
  }

  /** Lists the source again; when the tools changed, tells every live server (MCP-13). */
  async refresh(): Promise<void> {
    const next = this.load();
    let tools: Map<string, RequestTool>;
    try {
      tools = await next;
    } catch (error) {
      this.log(`delegate-mcp: cannot list the Requests: ${(error as Error).message}`);
      return;
    }
    this.current = next;
    const said = JSON.stringify([...tools.values()].map((tool) => tool.tool));
    if (said === this.said) return;
    this.said = said;
    await Promise.all([...this.servers].map((server) => server.sendToolListChanged().catch(() => undefined)));
  }

  /** The tools of the source's Requests by name; a later Request whose name is taken is left out, and said (MCP-9). */
  private async load(): Promise<Map<string, RequestTool>> {
    const tools = new Map<string, RequestTool>();
    for (const request of await this.options.source.list()) {
      const tool = requestTool(request);
      const taken = tools.get(tool.tool.name);
      if (taken) {
        this.log(`delegate-mcp: ${request.reference} is not offered: its tool name "${tool.tool.name}" is taken by ${taken.request.reference}.`);
        continue;
      }
      tools.set(tool.tool.name, tool);
    }
    if (this.said === '') this.said = JSON.stringify([...tools.values()].map((tool) => tool.tool));
    return tools;
  }
}

/** The W3C trace context a client put in a request's `_meta` (TEL-6): `traceparent` and, with it, `tracestate`; bounded, else none. */
export function traceContextOf(meta: Record<string, unknown> | undefined): TraceContext | undefined {
  const traceparent = meta?.traceparent;
  if (typeof traceparent !== 'string' || traceparent.length > 128) return undefined;
  const tracestate = meta?.tracestate;
  return typeof tracestate === 'string' && tracestate.length <= 512 ? { traceparent, tracestate } : { traceparent };
}
