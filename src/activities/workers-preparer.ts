/** The workers preparer (WRK-2 to WRK-5): before a run starts, each `workers` message becomes the tools that delegate to its allowed workers. */
import { readdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve as resolvePath, sep } from 'node:path';
import { DelegateError, RequestError, type Problem } from '../protocol/errors.js';
import type { HandlerRegistry } from '../protocol/messages/handlers.js';
import { pointer } from '../protocol/json.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import { declaredInputSchema } from '../protocol/messages/input.js';
import { isAllowedWorker, WORKER_NAME_PATTERN, type WorkersMessage } from '../protocol/messages/workers.js';
import { isReservedToolName } from '../protocol/tools/reserved-tools.js';
import { applyToolRules } from '../protocol/tools/tool-rules.js';
import type { RunOptions } from '../protocol/contracts.js';
import type { RunPreparer, Runtime } from '../protocol/run/runtime.js';
import type { JsonSchema, Message, RequestDocument, ToolMessage, ToolSchema } from '../protocol/types.js';
import { isHttpUrl, isInside } from '../resolvers/reference-forms.js';
import type { ResolvedRequest } from '../resolvers/resolver.js';
import { acceptsAttachments } from './attachment-policy.js';
import { creationTools, WORKER_CALL_TOOL, workerCallTool } from './created-workers.js';
import type { DelegateResolver } from './delegate.js';
import { mergeDelegateContract } from './upfront-preparer.js';

/** How many characters of a worker's first system text describe it when it has no `meta.description` (WRK-4). */
export const WORKER_DESCRIPTION_CHARS = 200;

/** The parameters of a worker that declares no input schema (WRK-4). */
const DEFAULT_WORKER_INPUT: JsonSchema = { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };

/** One worker found in a `workers` message's folder. */
interface FoundWorker {
  name: string;
  /** Its `_delegate` reference, relative to the referring document. */
  reference: string;
  resolved: ResolvedRequest;
}

/** A tool name and where it was defined, for collision messages (WRK-5). */
export interface Definition {
  pointer: string;
  /** What defined it, in words. */
  what: string;
}

/** A worker's tool description (WRK-4): its `meta.description`, else the first 200 characters of its first system text. */
export function workerDescription(document: RequestDocument): string | undefined {
  const described = document.meta?.description;
  if (typeof described === 'string' && described !== '') return described;
  const system = document.context.find((message) => message.type === 'system' && typeof (message as { text?: unknown }).text === 'string');
  const text = (system as { text?: string } | undefined)?.text;
  return text === undefined ? undefined : text.slice(0, WORKER_DESCRIPTION_CHARS);
}

/** The tool that delegates to a worker (WRK-4): its description, its input schema as parameters, its output schema as `_output`. */
export function workerTool(worker: { reference: string; document: RequestDocument }): ToolSchema {
  const description = workerDescription(worker.document);
  const base: ToolSchema = {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties: { _delegate: { const: worker.reference } },
  };
  const tool = mergeDelegateContract(base, declaredInputSchema(worker.document) ?? DEFAULT_WORKER_INPUT, worker.document.schema);
  if (!acceptsAttachments(worker.document)) return tool;
  return {
    ...tool,
    properties: {
      attachments: { type: 'array', items: { type: 'string' }, description: 'Paths of files to hand to the worker, relative to your root or a sandbox.' },
      ...tool.properties,
    },
  };
}

/** The `.json` files directly in a folder (WRK-2), sorted; dot-named files are skipped. */
async function jsonFilesIn(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  return entries
    .filter((entry) => entry.name.endsWith('.json') && !entry.name.startsWith('.') && !entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/**
 * The folder a `workers` message names (WRK-2), resolved against the referring document and kept
 * inside the root (lexically and once symbolic links are followed); a problem when it is not.
 */
async function workersFolder(from: string, request: LoadedRequest, root: string): Promise<string | { problem: string }> {
  if (isAbsolute(from) || from.includes('\\') || from.includes('%') || from.includes('\0'))
    return { problem: `Expected "from" to be a folder relative to the document (or a catalog URL), got "${from}".` };
  const base = isAbsolute(request.location) ? dirname(request.location) : root;
  const folder = resolvePath(base, from);
  if (!isInside(root, folder)) return { problem: `Expected "from" to stay inside the root ${root}, but "${from}" is ${folder}.` };
  let real: string;
  try {
    real = await realpath(folder);
  } catch {
    return { problem: `Expected "from" to name a folder, but ${folder} does not exist.` };
  }
  if (!isInside(await realpath(root), real))
    return { problem: `Expected "from" to stay inside the root ${root}, but ${folder} leads through a symbolic link to ${real}.` };
  return folder;
}

/** The tools a context defines before the workers are added, with where, for collision messages (WRK-5, MCP-3). */
export function definedTools(context: readonly Message[], handlers: HandlerRegistry): Map<string, Definition> {
  const defined = new Map<string, Definition>();
  const schemas = new Map<string, ToolSchema>();
  for (const [index, message] of context.entries()) {
    if (message.type === 'workers') continue;
    const offered = message.type === 'tool' ? (message as ToolMessage).tool : handlers.get(message.type)?.tools?.(message, schemas);
    for (const [name, schema] of Object.entries(offered ?? {})) {
      schemas.set(name, schema);
      defined.set(name, {
        pointer: message.type === 'tool' ? pointer('context', index, 'tool', name) : pointer('context', index),
        what: message.type === 'tool' ? `the tool "${name}"` : `the tool "${name}" that the ${message.type} message offers`,
      });
    }
  }
  return defined;
}

/** Options of {@link createWorkersPreparer}. */
export interface WorkersPreparerOptions {
  /** Resolves each worker's document (confined, validated) as a `_delegate` reference would be. */
  resolvers: DelegateResolver;
  /** The folder workers are confined to (the runtime's root). */
  root: string;
}

/**
 * A run preparer that turns every `workers` message into a `tool` message at its place: one tool
 * per allowed worker, named after it and delegating to it (WRK-2 to WRK-4), and one `worker_call`
 * reaching those workers and created ones (WRK-9). Collisions with another
 * tool, another worker or a reserved name, an allowed name no worker has, and a `from` that is not
 * a folder inside the root are `invalid_request`, before the first model call (WRK-5).
 */
export function createWorkersPreparer(options: WorkersPreparerOptions): RunPreparer {
  const root = resolvePath(options.root);
  return async (request: LoadedRequest, runOptions: RunOptions, runtime: Runtime): Promise<LoadedRequest> => {
    if (!request.document.context.some((message) => message.type === 'workers')) return request;
    const problems: Problem[] = [];
    const problem = (at: string, message: string) => problems.push({ document: request.location, pointer: at, message });
    const defined = definedTools(request.document.context, runtime.handlers);
    const context: Message[] = [];
    // What worker_call may reach: every allowed worker of the document, and created ones when a message says so (WRK-9).
    const callable: Record<string, ToolSchema> = {};
    let creates = false;
    let last: ToolMessage | undefined;
    for (const [index, message] of request.document.context.entries()) {
      if (message.type !== 'workers') {
        context.push(message);
        continue;
      }
      const workers = message as WorkersMessage;
      const at = pointer('context', index);
      const found = await findWorkers(workers, request, root, runOptions, options.resolvers, (message) => problem(`${at}/from`, message));
      const tools: Record<string, ToolSchema> = {};
      for (const worker of found) {
        const place = `${at} (${worker.reference})`;
        const earlier = defined.get(worker.name);
        if (isReservedToolName(worker.name))
          problem(
            at,
            `Expected the worker "${worker.name}" of ${worker.reference} not to take the name of the built-in tool "${worker.name}", which is reserved.`,
          );
        else if (earlier)
          problem(
            at,
            `Expected the worker "${worker.name}" of the workers message at ${place} not to collide with ${earlier.what} defined at ${earlier.pointer}.`,
          );
        defined.set(worker.name, { pointer: at, what: `the worker "${worker.name}" of ${worker.reference}` });
        tools[worker.name] = workerTool({ reference: worker.reference, document: worker.resolved.document });
        callable[worker.name] = tools[worker.name];
      }
      if (Array.isArray(workers.allow))
        for (const [position, name] of workers.allow.entries())
          if (!name.includes('*') && !found.some((worker) => worker.name === name))
            problem(
              `${at}/allow/${position}`,
              `Expected a worker named "${name}" in "${workers.from}", found ${found.length === 0 ? 'none' : found.map((worker) => `"${worker.name}"`).join(', ')}.`,
            );
      if (workers.create === true) {
        // Every name defined so far, configured workers included: a created worker never shadows one (WRK-8).
        const taken = [...new Set([...defined.keys(), ...Object.keys(tools)])];
        Object.assign(tools, creationTools(taken));
        creates = true;
      }
      last = { type: 'tool', tool: tools } as ToolMessage;
      context.push(last);
    }
    if (problems.length > 0) throw new RequestError(problems);
    // One worker_call for the whole document, offered whenever some worker is callable (WRK-9); it
    // reaches only the workers the document's tool rules leave offered (TOOL-21).
    const reachable = new Map(Object.entries(callable));
    applyToolRules(reachable, request.document.config?.toolRules ?? []);
    if (last && (creates || reachable.size > 0)) last.tool[WORKER_CALL_TOOL] = workerCallTool(Object.fromEntries(reachable), creates);
    return { ...request, document: { ...request.document, context } };
  };
}

/** A worker a `workers` message may offer, before it is resolved: the name its place gives it and its `_delegate` reference. */
interface Candidate {
  byPlace: string;
  /** True when `byPlace` is the worker's name already (a catalog gives DOC-4 names), so a worker not allowed need not be fetched. */
  named?: boolean;
  reference: string;
}

/** The `.json` files of a `workers` folder (WRK-2), each with its reference relative to the referring document. */
async function folderCandidates(message: WorkersMessage, request: LoadedRequest, root: string, problem: (message: string) => void): Promise<Candidate[]> {
  const folder = await workersFolder(message.from, request, root);
  if (typeof folder !== 'string') {
    problem(folder.problem);
    return [];
  }
  const base = isAbsolute(request.location) ? dirname(request.location) : root;
  return (await jsonFilesIn(folder)).map((path) => {
    const relativePath = relative(base, join(folder, path)).split(sep).join('/');
    return { byPlace: path.slice(0, -'.json'.length), reference: relativePath.startsWith('.') ? relativePath : `./${relativePath}` };
  });
}

/** The Requests a `delegate-serve` catalog lists (WRK-2), read under the URL rules (host allow-list, limits); a problem when it cannot be read. */
async function catalogCandidates(
  catalog: string,
  resolvers: DelegateResolver,
  runOptions: RunOptions,
  problem: (message: string) => void,
): Promise<Candidate[]> {
  if (resolvers.catalog === undefined) {
    problem(`Expected "from" to be a folder: this runtime reads no catalogs, got "${catalog}".`);
    return [];
  }
  try {
    const entries = await resolvers.catalog(catalog, {
      toolName: 'workers',
      tool: { type: 'object', properties: { _delegate: { const: catalog } } },
      ...(runOptions.signal ? { signal: runOptions.signal } : {}),
    });
    return entries.map((entry) => ({ byPlace: entry.name, reference: entry.reference, named: true }));
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    problem(`Expected "from" to name a delegate-serve catalog that can be read: ${error.message}`);
    return [];
  }
}

/** `from` resolved against a served document's URL (WRK-2); the text as it is when it is no URL reference. */
function catalogUrl(from: string, location: string): string {
  try {
    return new URL(from, location).href;
  } catch {
    return from;
  }
}

/** The allowed workers of one `workers` message, by name, each resolved as a `_delegate` reference (WRK-2, WRK-3). */
async function findWorkers(
  message: WorkersMessage,
  request: LoadedRequest,
  root: string,
  runOptions: RunOptions,
  resolvers: DelegateResolver,
  problem: (message: string) => void,
): Promise<FoundWorker[]> {
  // A served document has no folders to list, only its server's catalog, so its `from` is a catalog's URL relative to it.
  const catalog = isHttpUrl(message.from) ? message.from : isHttpUrl(request.location) ? catalogUrl(message.from, request.location) : undefined;
  const candidates =
    catalog === undefined ? await folderCandidates(message, request, root, problem) : await catalogCandidates(catalog, resolvers, runOptions, problem);
  const found: FoundWorker[] = [];
  for (const { byPlace, reference, named: final } of candidates) {
    // A catalog names its Requests: one not allowed is never fetched (WRK-2, WRK-3).
    if (final && !isAllowedWorker(message.allow, byPlace)) continue;
    let resolved: ResolvedRequest;
    try {
      resolved = await resolvers.resolve(reference, {
        ...(isAbsolute(request.location) ? { base: request.location } : {}),
        toolName: byPlace,
        tool: { type: 'object', properties: { _delegate: { const: reference } } },
        ...(runOptions.signal ? { signal: runOptions.signal } : {}),
      });
    } catch (error) {
      // A document that is not a valid Request stops the run only when the workers would offer it.
      if (isAllowedWorker(message.allow, byPlace)) throw error;
      continue;
    }
    const named = resolved.document.meta?.name;
    const name = typeof named === 'string' && named !== '' ? named : byPlace;
    if (!isAllowedWorker(message.allow, name)) continue;
    if (WORKER_NAME_PATTERN.test(name)) found.push({ name, reference, resolved });
    else problem(`Expected the worker of ${reference} to be named like a tool (${WORKER_NAME_PATTERN.source}), got "${name}".`);
  }
  return found;
}
