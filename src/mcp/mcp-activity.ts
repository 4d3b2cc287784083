/** The Activity behind MCP tools (MCP-5, MCP-6): calls the tool on its run tree's connection and turns the answer into the call's result. */
import { ActivityError } from '../protocol/errors.js';
import type { Activity } from '../protocol/contracts.js';
import { isJsonObject, isMetaProperty, type Call } from '../protocol/types.js';
import { MCP_CALL_TIMEOUT_MS, type McpConnections } from './mcp-connections.js';
import { callResultOf, errorTextOf, MCP_TARGET_PROPERTY, type McpTarget } from './mcp-tools.js';

/** The call's own arguments: every parameter but the meta-properties the runtime fills in. */
function argumentsOf(call: Call): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call).filter(([key]) => !isMetaProperty(key)));
}

function targetOf(call: Call): McpTarget {
  const target = call[MCP_TARGET_PROPERTY];
  if (!isJsonObject(target) || typeof target.server !== 'string' || typeof target.tool !== 'string')
    throw new ActivityError('activity_error', `The tool "${call._tool}" names no MCP server to call.`, { toolName: call._tool });
  return target as unknown as McpTarget;
}

/**
 * Creates the MCP Activity over the run trees' connections (MCP-5): the call goes to the server its
 * tool names, in the caller's tree, with the call's parameters as arguments; cancelling the run
 * cancels the request. A server that failed to start, died or answers with an error fails the call
 * with `activity_error`, naming the server and the tool, and the run goes on (MCP-6).
 */
export function createMcpActivity(connections: McpConnections): Activity {
  return async (call, _tool, _context, environment) => {
    const target = targetOf(call);
    const tree = environment.run.root ?? environment.run.id;
    const found = connections.find(tree, target.server);
    const connection = found ? await found : undefined;
    const failure = connection === undefined ? 'this run tree never started it' : connection.failure();
    const label = connection?.label ?? target.server;
    const fail = (why: string) =>
      new ActivityError('activity_error', `The MCP tool "${target.tool}" of the server "${label}" failed: ${why}`, { toolName: call._tool, server: label });
    const client = connection?.client;
    if (failure !== undefined || client === undefined) throw fail(`the server cannot be reached: ${failure ?? 'it closed the connection'}.`);
    let result: Awaited<ReturnType<typeof client.callTool>>;
    try {
      // The call's span travels in `_meta`, so a server that traces joins the run's trace (TEL-6).
      const traceContext = environment.trace.tracer.contextOf(environment.run.id, environment.callId);
      const meta = traceContext === undefined ? {} : { _meta: { ...traceContext } };
      result = await client.callTool({ name: target.tool, arguments: argumentsOf(call), ...meta }, undefined, {
        signal: environment.signal,
        timeout: MCP_CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
      });
    } catch (error) {
      // A cancelled run's error is the cancellation, which the loop reports itself.
      if (environment.signal.aborted) throw error;
      const died = connection?.failure();
      throw fail(died === undefined ? (error as Error).message : `the server cannot be reached: ${died}.`);
    }
    if (!('content' in result)) return result.toolResult;
    if (result.isError === true) throw fail(errorTextOf(result as { content: [] }));
    return callResultOf(result as Parameters<typeof callResultOf>[0]);
  };
}
