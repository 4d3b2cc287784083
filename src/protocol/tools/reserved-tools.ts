/** Tool names the runtime keeps for its own built-in tools (spec/workers.md WRK-5): a worker or any other tool may not take one. */

/**
 * The reserved tool names: the tools the workers layer, the tier delegation, the file toolset and
 * the on-demand advisors offer themselves. One list, so each layer that adds a built-in tool adds
 * its name here and every collision check (WRK-5, WRK-8) sees it.
 */
export const RESERVED_TOOL_NAMES: readonly string[] = [
  'worker_call',
  'worker_create',
  'delegate',
  'need_context',
  'read_file',
  'write_file',
  'list_files',
  'consult_advisor',
];

/** Whether a tool name is reserved for a built-in tool (WRK-5). */
export function isReservedToolName(name: string): boolean {
  return RESERVED_TOOL_NAMES.includes(name);
}
