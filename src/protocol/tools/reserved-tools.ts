/** Tool names the runtime keeps for its own built-in tools (spec/workers.md WRK-4): a worker or any other tool may not take one. */

/**
 * The reserved tool names: the tools the workers layer, the tier delegation and the file toolset
 * offer themselves. One list, so each layer that adds a built-in tool adds its name here and every
 * collision check (WRK-4) sees it.
 */
export const RESERVED_TOOL_NAMES: readonly string[] = ['worker_call', 'worker_create', 'delegate', 'need_context', 'read_file', 'write_file', 'list_files'];

/** Whether a tool name is reserved for a built-in tool (WRK-4). */
export function isReservedToolName(name: string): boolean {
  return RESERVED_TOOL_NAMES.includes(name);
}
