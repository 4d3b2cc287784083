/** The `workers` message (WRK-1 to WRK-6): a team of Requests in a folder or a served catalog, offered as tools by name. */
import { compileGlob, firstMatches } from '../tools/glob-match.js';
import { defineHandler } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import type { BaseMessage } from '../types.js';
import { messageSchema } from './message-schema.js';

/** A registry of workers: each allowed Request of `from` becomes a tool named after it (WRK-1). */
export interface WorkersMessage extends BaseMessage {
  type: 'workers';
  /** A folder under the root (relative to the document) or the URL of a `delegate-serve` catalog. */
  from: string;
  /** The worker names offered: exact names, `prefix-*` globs, or `"*"` for all (WRK-3). */
  allow: string[] | '*';
  /** Offers `worker_create` and `worker_call` (WRK-7): workers the model makes for this run tree. */
  create?: boolean;
}

/** What a worker's name, and so its tool's, must look like (WRK-2, WRK-7). */
export const WORKER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether a worker name is allowed by a `workers` message's `allow` (WRK-3): `*` matches any run of
 * characters. The globs are picomatch's, matched within the glob budget (FILES-12); one that
 * needs more throws, naming it, rather than pinning the CPU.
 */
export function isAllowedWorker(allow: WorkersMessage['allow'], name: string): boolean {
  if (allow === '*') return true;
  return (
    firstMatches(
      allow.map((pattern) => compileGlob(pattern, { wildcardsOnly: true })),
      [name],
    )[0] !== -1
  );
}

/** The handler of `workers`: its tools come from the workers preparer, which reads `from` before the run (WRK-2). */
export const workersHandler = defineHandler<WorkersMessage>({
  type: 'workers',
  schema: messageSchema('workers'),
  check(message) {
    const problems: MessageProblem[] = [];
    if (Array.isArray(message.allow)) {
      const seen = new Set<string>();
      for (const [index, pattern] of message.allow.entries()) {
        if (seen.has(pattern)) problems.push({ pointer: `/allow/${index}`, message: `Expected each allowed name once, got "${pattern}" twice.` });
        seen.add(pattern);
      }
    }
    return problems;
  },
});
