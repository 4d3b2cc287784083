/** The file toolset's tools (FILES-1 to FILES-6): names, built-in Activity names and the schemas the `toolset` message offers. */
import type { ToolSchema } from '../types.js';

/** One sandbox of a `files` toolset, as the document declares it (FILES-2). */
export interface SandboxSpec {
  /** A folder relative to the document's folder, inside the root. */
  path: string;
  /** `ro`: listed and read; `rw`: also written. */
  mode: 'ro' | 'rw';
  /** When given, only files ending in one of these suffixes are listed, read or written. */
  allowSuffixes?: string[];
  /** Files ending in one of these are never listed, read or written. */
  denySuffixes?: string[];
  /** The largest file read or written, in bytes (capped by {@link MAX_FILE_BYTES}). */
  maxBytes?: number;
  /**
   * Lets `read_file` read a file with more than one hard link (FILES-10): only for a sandbox whose
   * folder holds no link to a file outside it, since a hard link looks like any file inside.
   */
  readHardLinks?: boolean;
}

/** The built-in Activities behind the file tools. */
export const LIST_FILES_ACTIVITY = '@list-files';
/** See {@link LIST_FILES_ACTIVITY}. */
export const READ_FILE_ACTIVITY = '@read-file';
/** See {@link LIST_FILES_ACTIVITY}. */
export const WRITE_FILE_ACTIVITY = '@write-file';

/** The global cap on a file read or written through the toolset (FILES-4), whatever a sandbox says. */
export const MAX_FILE_BYTES = 1_000_000;

/** The meta-property fixing a file tool's sandboxes, filled into every call (FILES-3). */
export const SANDBOXES_PROPERTY = '_sandboxes';

/** The tools a `files` toolset offers for its sandboxes (FILES-3): `write_file` only when one is `rw`, and gated by default (FILES-5). */
export function fileTools(sandboxes: Record<string, SandboxSpec>): Record<string, ToolSchema> {
  const names = Object.keys(sandboxes);
  const writable = names.filter((name) => sandboxes[name]?.mode === 'rw');
  const fixed = { [SANDBOXES_PROPERTY]: { const: sandboxes } };
  const tools: Record<string, ToolSchema> = {
    list_files: {
      type: 'object',
      description: `Lists the files of a sandbox (${names.join(', ')}), as "<sandbox>/<relative path>"; glob filters them ("*" within a folder, "**" across folders).`,
      properties: { sandbox: { enum: names }, glob: { type: 'string' }, _activity: { const: LIST_FILES_ACTIVITY }, ...fixed },
      required: ['sandbox'],
    },
    read_file: {
      type: 'object',
      description: 'Reads a UTF-8 text file, addressed as "<sandbox>/<relative path>".',
      properties: { path: { type: 'string' }, _activity: { const: READ_FILE_ACTIVITY }, ...fixed },
      required: ['path'],
    },
  };
  if (writable.length > 0) {
    tools.write_file = {
      type: 'object',
      description: `Writes a UTF-8 text file, addressed as "<sandbox>/<relative path>", in a writable sandbox (${writable.join(', ')}); asks for approval.`,
      properties: {
        path: { type: 'string' },
        content: { type: 'string' },
        _activity: { const: WRITE_FILE_ACTIVITY },
        _approval: { const: 'required' },
        ...fixed,
      },
      required: ['path', 'content'],
    };
  }
  return tools;
}
