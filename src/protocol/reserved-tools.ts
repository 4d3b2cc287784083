/** Tool names the runtime's own layers offer (FILES-1, and the worker tools): no document may define another tool by them. */

/** The tool names reserved for built-in tools: worker tools, the delegate tools and the file toolset. */
export const RESERVED_TOOL_NAMES: readonly string[] = ['worker_call', 'worker_create', 'delegate', 'need_context', 'read_file', 'write_file', 'list_files'];

/** True when `name` is one of {@link RESERVED_TOOL_NAMES}. */
export function isReservedToolName(name: string): boolean {
  return RESERVED_TOOL_NAMES.includes(name);
}
