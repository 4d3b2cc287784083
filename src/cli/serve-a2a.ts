/** The A2A face of `delegate-serve --a2a` (A2A-1, A2A-11): delegate-run's run options read, the runtime set up, each Request of the folder an agent; loaded only with --a2a. */
import { resolve } from 'node:path';
import { type A2aHandler, createA2aHandler, withA2a } from '../a2a/a2a-handler.js';
import type { RequestRunner } from '../a2a/request-executor.js';
import { createApprovalHook } from '../approvals/approval-policy.js';
import { ModelCatalog } from '../models/model-catalog.js';
import { UsageError } from '../protocol/errors.js';
import type { RequestHandler } from '../server/handler.js';
import type { FetchHandler } from '../server/node-listener.js';
import { type CliIo, loadActivities, openCheckedTrace, type ParsedArguments, parseArguments, parseWithOptions, runtimeFor } from './run-setup.js';
import { RunSession } from './run-session.js';
import { SERVER_REFUSED_OPTIONS, servedRunner } from './served-run.js';

/** Delegate-run's options `--a2a` refuses besides those every server does (A2A-11). */
const A2A_REFUSED_OPTIONS = {
  ...SERVER_REFUSED_OPTIONS,
  queue: 'its runs run in this process (QUEUE-1 is for delegate-run and delegate-mcp)',
  'queue-name': 'its runs run in this process (QUEUE-1 is for delegate-run and delegate-mcp)',
  'queue-timeout': 'its runs run in this process (QUEUE-1 is for delegate-run and delegate-mcp)',
  'queue-heartbeat': 'its runs run in this process (QUEUE-1 is for delegate-run and delegate-mcp)',
  'queue-keep': 'its runs run in this process (QUEUE-1 is for delegate-run and delegate-mcp)',
  journal: 'a server runs many run trees, and a journal holds one',
  resume: 'a server runs many run trees, and a journal holds one',
} as const;

/** The A2A face and what closes it. */
export interface A2aFace {
  handler: A2aHandler;
  /** The document handler with the A2A face beside it, for the listener. */
  served: FetchHandler;
  /** Closes the trace and the runtime's resolvers, once the server stopped. */
  close(): Promise<void>;
}

/** What the face is built on: the served folder, its document handler, and the origin the server listens at. */
export interface A2aSetting {
  root: string;
  documents: RequestHandler;
  origin: () => string;
  version: string;
  log: (line: string) => void;
  onError: (error: unknown) => void;
}

/**
 * Reads delegate-run's run options given with `--a2a` (A2A-11), the folder among them as
 * delegate-mcp takes it (`defaultFolder` when none is named); throws UsageError for the options a
 * server refuses or that are malformed.
 */
export function parseA2aArguments(argv: string[], cwd: string, defaultFolder: string): ParsedArguments | 'help' | 'version' {
  const { values, positionals } = parseWithOptions(argv);
  if (values.help) return 'help';
  if (values.version) return 'version';
  for (const [option, why] of Object.entries(A2A_REFUSED_OPTIONS))
    if (values[option as keyof typeof A2A_REFUSED_OPTIONS] !== undefined) throw new UsageError(`--${option} is not an option of delegate-serve --a2a: ${why}.`);
  if (values.approve === 'interactive')
    throw new UsageError(
      '--approve interactive needs a terminal, and delegate-serve has none: approvals are asked of the A2A client unless --approve approve_all or strict.',
    );
  return parseArguments(positionals.length === 0 ? [...argv, defaultFolder] : argv, cwd);
}

/**
 * Builds the A2A face for the parsed run options (A2A-11): the runtime rooted at the served folder (or `--root`), one run tree per task,
 * its approvals asked of the task's client unless `--approve approve_all` or `strict` answers them
 * (A2A-8). Throws when an Activity module or the trace cannot be opened.
 */
export async function a2aFace(args: ParsedArguments, io: CliIo, setting: A2aSetting): Promise<A2aFace> {
  const session = new RunSession();
  try {
    const activities = await loadActivities(args.activities, io.cwd);
    const catalog = ModelCatalog.load({ env: io.env, cwd: io.cwd });
    const root = args.root === undefined ? setting.root : resolve(io.cwd, args.root);
    const runtime = runtimeFor(args, io, { root, allowHosts: args.allowHosts, activities, catalog });
    session.runtime = runtime;
    session.sink = openCheckedTrace(args, io.cwd);
    const say = (line: string) => void io.stderr.write(`delegate-serve: ${line}\n`);
    const runOne = servedRunner(args, io, runtime, session, say);
    const mode = args.approve;
    const run: RequestRunner = (reference, input, task) =>
      runOne(reference, input, {
        signal: task.signal,
        tracer: task.tracer,
        confirm: mode === 'approve_all' || mode === 'strict' ? createApprovalHook({ mode }) : createApprovalHook({ mode: 'interactive', prompt: task.prompt }),
      });
    const handler = createA2aHandler({ ...setting, root: resolve(setting.root), run });
    return { handler, served: withA2a(setting.documents, handler), close: () => session.close() };
  } catch (error) {
    await session.close();
    throw error;
  }
}
