/** Workers by name (WRK-7 to WRK-10): `worker_create` makes a tool-less Request kept for the run tree, `worker_call` runs a configured or created one. */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { ActivityError, BoundError, CallError, DelegateError, RequestError } from '../protocol/errors.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import type { Activity, ActivityEnvironment } from '../protocol/contracts.js';
import { formatIssues, validateAgainst } from '../protocol/schemas.js';
import { callValidationSchema, metaConst } from '../protocol/tools/tools.js';
import { type Call, isJsonObject, type RequestDocument, type ToolSchema } from '../protocol/types.js';
import { type AttachmentPlaces, callAttachments, handOver, takesAttachments } from './call-attachments.js';
import { type ChildModelChooser, runDelegation } from './delegate.js';
import { WORKER_NAME_PATTERN } from '../protocol/messages/workers.js';
import { isReservedToolName, RESERVED_TOOL_NAMES } from '../protocol/tools/reserved-tools.js';

/** The tool that creates a worker (WRK-7). */
export const WORKER_CREATE_TOOL = 'worker_create';
/** The tool that calls a created worker (WRK-9). */
export const WORKER_CALL_TOOL = 'worker_call';
/** The Activity behind {@link WORKER_CREATE_TOOL}. */
export const WORKER_CREATE_ACTIVITY = '@worker-create';
/** The Activity behind {@link WORKER_CALL_TOOL}. */
export const WORKER_CALL_ACTIVITY = '@worker-call';

/** The steps a created worker may take at most (WRK-8): a safe default, since no person wrote it. */
export const CREATED_WORKER_MAX_STEPS = 8;

/** The attachments a created worker accepts (WRK-8, ATT-3): a few files, 20 MB in all; the caller's own policy is checked first. */
export const CREATED_WORKER_ATTACHMENTS = { maxCount: 10, maxBytes: 20_000_000 } as const;

/** The workers one run tree may create by default (WRK-11, `--max-workers`). */
export const DEFAULT_MAX_WORKERS = 32;

/** The meta-property of `worker_call` holding the configured workers it may call, by name: each one's own tool (WRK-9). */
export const CALLABLE_WORKERS = '_workers';

/**
 * `worker_call` (WRK-9): offered whenever a worker is callable, so for every `workers` message that
 * allows a configured worker or creates them. `configured` are the tools of the workers the
 * document's `workers` messages allow, by name: the only configured workers it may call, held as
 * a const meta-property the model never sees (TOOL-5).
 */
export function workerCallTool(configured: Readonly<Record<string, ToolSchema>>, create: boolean): ToolSchema {
  const names = Object.keys(configured);
  const which = [
    ...(names.length > 0 ? [`one of your workers (${names.join(', ')})`] : []),
    ...(create ? ['a worker you created with worker_create in this task'] : []),
  ].join(' or ');
  return {
    type: 'object',
    description: `Calls ${which} by name, with an input; it sees only that input.`,
    properties: {
      worker: { type: 'string', description: 'The worker’s name.' },
      input: { description: 'What the worker is given: its parameters when it declares an input schema, else its input text.' },
      attachments: { type: 'array', items: { type: 'string' }, description: 'Paths of files to hand to the worker.' },
      _activity: { const: WORKER_CALL_ACTIVITY },
      [CALLABLE_WORKERS]: { const: configured },
    },
    required: ['worker', 'input'],
  };
}

/**
 * `worker_create`, which a `workers` message with `"create": true` offers (WRK-7). `taken` are the
 * names of the document's tools, configured workers included: a created worker may have none of
 * them, so it never shadows one, nor any built-in tool's (WRK-8).
 */
export function creationTools(taken: readonly string[]): Record<string, ToolSchema> {
  const name: Record<string, unknown> = {
    type: 'string',
    pattern: WORKER_NAME_PATTERN.source,
    not: { enum: [...new Set([...RESERVED_TOOL_NAMES, ...taken])] },
    description: 'The new worker’s name: not the name of a tool you have.',
  };
  return {
    [WORKER_CREATE_TOOL]: {
      type: 'object',
      description:
        'Creates a specialised worker for this task: a Request with your instructions as its system text and no tools. A person approves it first. Call it afterwards with worker_call.',
      properties: {
        name,
        instructions: { type: 'string', minLength: 1, description: 'Its system text: who it is and what it does.' },
        description: { type: 'string', minLength: 1, description: 'One sentence saying what it is for.' },
        schema: { type: 'object', description: 'JSON Schema of its output (default: a string).' },
        model: { type: 'string', description: 'Its model, as <provider>:<model> (default: yours).' },
        tier: { type: 'string', description: 'Its model tier (fast, balanced, deep), when no model is given.' },
        _activity: { const: WORKER_CREATE_ACTIVITY },
        _approval: { const: 'required' },
      },
      required: ['name', 'instructions', 'description'],
    },
  };
}

/** One created worker: its validated Request and where it was written, if anywhere. */
interface CreatedWorker {
  request: LoadedRequest;
}

/** The workers of one run tree: those created, and the names of those being created (WRK-8, WRK-11). */
interface TreeWorkers {
  created: Map<string, CreatedWorker>;
  /** Names taken by `worker_create` calls still validating or writing their worker: they count against the limit already. */
  pending: Set<string>;
}

/** The workers created in each run tree, by tree (the top run's id) and name (WRK-8). */
export class CreatedWorkers {
  private readonly trees = new Map<string, TreeWorkers>();

  /** The workers of a run's tree. */
  of(environment: ActivityEnvironment): Map<string, CreatedWorker> {
    return this.tree(environment).created;
  }

  /**
   * Takes a name for a worker about to be created in the run's tree, before anything is awaited,
   * so calls of one answer running at once can neither share a name nor pass the limit together
   * (WRK-8, WRK-11). Throws `invalid_params` for a name taken and `budget_exceeded` past `limit`;
   * the returned function gives the name back, kept or not.
   */
  reserve(environment: ActivityEnvironment, name: string, limit: number): () => void {
    const tree = this.tree(environment);
    if (tree.created.has(name) || tree.pending.has(name))
      throw new CallError('invalid_params', `A worker named "${name}" was already created in this task; choose another name.`, {
        toolName: WORKER_CREATE_TOOL,
      });
    if (tree.created.size + tree.pending.size >= limit)
      throw new BoundError(
        'budget_exceeded',
        `The worker "${name}" was not created: this task may create at most ${limit} worker${limit === 1 ? '' : 's'} (--max-workers), and has ${tree.created.size + tree.pending.size}; call one of them with worker_call instead.`,
        { toolName: WORKER_CREATE_TOOL, maxWorkers: limit },
      );
    tree.pending.add(name);
    return () => {
      tree.pending.delete(name);
    };
  }

  /** Keeps a created worker for the run's tree, its name no longer pending (WRK-8). */
  keep(environment: ActivityEnvironment, name: string, worker: CreatedWorker): void {
    const tree = this.tree(environment);
    tree.created.set(name, worker);
    tree.pending.delete(name);
  }

  private tree(environment: ActivityEnvironment): TreeWorkers {
    const key = environment.run.root ?? environment.run.id;
    let tree = this.trees.get(key);
    if (!tree) {
      tree = { created: new Map(), pending: new Set() };
      this.trees.set(key, tree);
    }
    return tree;
  }
}

/** The Request a `worker_create` call describes (WRK-8): a system text, no tools, bounded steps, no delegation. */
export function createdWorkerDocument(call: Record<string, unknown>): RequestDocument {
  const config: Record<string, unknown> = { maxSteps: CREATED_WORKER_MAX_STEPS, delegation: false, attachments: { ...CREATED_WORKER_ATTACHMENTS } };
  if (typeof call.model === 'string') config.model = call.model;
  else if (typeof call.tier === 'string') config.tier = call.tier;
  return {
    meta: { name: String(call.name), description: String(call.description) },
    config,
    context: [{ type: 'system', text: String(call.instructions) }],
    schema: isJsonObject(call.schema) ? call.schema : { type: 'string' },
  };
}

/** Options of the created-workers Activities; `root` and `locate` place `worker_call`'s attachments (ATT-2). */
export interface CreatedWorkersOptions extends AttachmentPlaces {
  store: CreatedWorkers;
  /** Validates a document as the runtime loads one (throws RequestError). */
  validate: (document: RequestDocument, location: string) => LoadedRequest;
  /** Picks a created worker's model: its own `config.model` or tier, else the caller's (DEL-16). */
  chooseModel?: ChildModelChooser;
  /** Where created workers are also written, one `<name>.json` each, never overwriting (WRK-8). */
  workersDir?: string;
  /** The workers one run tree may create (WRK-11; default {@link DEFAULT_MAX_WORKERS}). */
  maxWorkers?: number;
}

/** Writes a created worker's document to `<dir>/<name>.json`, refusing to replace an existing file (WRK-8). */
async function writeWorker(dir: string, name: string, document: RequestDocument): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(resolvePath(dir), `${name}.json`);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new ActivityError('activity_error', `Cannot write the worker "${name}": ${path} exists already, and created workers never overwrite a file.`, {
        path,
      });
    throw error;
  }
  try {
    await handle.writeFile(`${JSON.stringify(document, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  return path;
}

/**
 * The `worker_create` Activity (WRK-7, WRK-8, WRK-11): validates the new worker, keeps it for the
 * run tree, writes it when asked; a built-in tool's name, a name taken and a worker past the
 * tree's limit fail the call.
 */
export function createWorkerCreateActivity(options: CreatedWorkersOptions): Activity {
  return async (call, _tool, _context, environment) => {
    const name = String(call.name);
    // The tool's schema says so already; an edited call or a hand-made tool must not slip past it.
    if (isReservedToolName(name))
      throw new CallError('invalid_params', `A worker may not be named "${name}": that is the name of a built-in tool; choose another name.`, {
        toolName: WORKER_CREATE_TOOL,
        reserved: RESERVED_TOOL_NAMES,
      });
    const release = options.store.reserve(environment, name, options.maxWorkers ?? DEFAULT_MAX_WORKERS);
    try {
      const path = await createWorker(options, call, name, environment);
      return { created: name, ...(path === undefined ? {} : { path }) };
    } finally {
      release();
    }
  };
}

/** Validates, writes and keeps the worker a `worker_create` call describes, its name reserved (WRK-8); resolves to where it was written, if anywhere. */
async function createWorker(
  options: CreatedWorkersOptions,
  call: Record<string, unknown>,
  name: string,
  environment: ActivityEnvironment,
): Promise<string | undefined> {
  const document = createdWorkerDocument(call);
  let request: LoadedRequest;
  try {
    request = options.validate(document, `worker:${name}`);
  } catch (error) {
    if (!(error instanceof RequestError)) throw error;
    throw new CallError(
      'invalid_params',
      `The worker "${name}" is not a valid Request: ${error.problems.map((problem) => `${problem.pointer}: ${problem.message}`).join(' ')}`,
      {
        toolName: WORKER_CREATE_TOOL,
        problems: error.problems,
      },
    );
  }
  const path = options.workersDir === undefined ? undefined : await writeWorker(options.workersDir, name, document);
  options.store.keep(environment, name, { request: { ...request, name } });
  return path;
}

/** Options of the `worker_call` Activity: those of created workers, and the Delegation Activity that runs a configured worker (WRK-9). */
export interface WorkerCallOptions extends CreatedWorkersOptions {
  /** Runs a configured worker's tool as any delegating call (DEL-8). */
  delegate: Activity;
}

/**
 * The `worker_call` Activity (WRK-9): runs a configured worker the calling run's `workers` messages
 * allow, through the Delegation Activity as its own tool would, or a worker created in this run
 * tree; any other name is `delegate_forbidden`, so the allow-list is never bypassed (WRK-3).
 */
export function createWorkerCallActivity(options: WorkerCallOptions): Activity {
  return async (call, tool, context, environment) => {
    const name = String(call.worker);
    const configured = configuredWorker(tool, name);
    if (configured) return options.delegate(configuredCall(call, name, configured), configured, context, environment);
    const worker = options.store.of(environment).get(name);
    if (!worker) {
      const callable = Object.keys(configuredWorkers(tool));
      throw new DelegateError(
        'delegate_forbidden',
        `worker_call may only call a worker your workers messages allow (${callable.length === 0 ? 'none' : callable.join(', ')}) or one created in this task with worker_create, and "${name}" is neither.`,
        { worker: name, available: callable },
      );
    }
    const { document } = worker.request;
    // Its attachments are prepared as for any delegation: confined, caller's then its policy, approved (ATT-1 to ATT-7).
    const attached = handOver(await callAttachments(call, tool, document, environment, options, name));
    const request =
      attached.messages.length === 0 ? worker.request : { ...worker.request, document: { ...document, context: [...document.context, ...attached.messages] } };
    const model = options.chooseModel?.(document, environment.run.model, environment, worker.request.location);
    const { result } = await runDelegation(
      environment,
      {
        request,
        input: takesAttachments(document)
          ? { input: call.input }
          : { input: call.input, ...(call.attachments === undefined ? {} : { attachments: call.attachments }) },
        ...(attached.files === undefined ? {} : { files: attached.files }),
        ...(model === undefined ? {} : { model }),
        trusted: environment.run.trusted,
        description: `Calling the created worker "${name}"`,
      },
      {
        delegate: worker.request.location,
        name,
        reference: name,
        registry: null,
        resolution: 'runtime',
        scopes: [],
        tier: document.config?.tier ?? null,
        ...(attached.records === undefined ? {} : { attachments: attached.records }),
      },
    );
    if (!result.ok) throw result.error;
    return result.output;
  };
}

/** The configured workers a `worker_call` tool may call, by name (WRK-9). */
function configuredWorkers(tool: ToolSchema): Record<string, ToolSchema> {
  const workers = metaConst(tool, CALLABLE_WORKERS);
  return isJsonObject(workers) ? (workers as Record<string, ToolSchema>) : {};
}

/** The tool of the configured worker `name`, when the `worker_call` tool allows it. */
function configuredWorker(tool: ToolSchema, name: string): ToolSchema | undefined {
  const workers = configuredWorkers(tool);
  return Object.hasOwn(workers, name) ? workers[name] : undefined;
}

/**
 * The call of a configured worker's own tool that a `worker_call` stands for (WRK-9): `input` is its
 * parameters when it is an object, else `{input}`, plus `attachments`; checked against the
 * worker's tool, so a bad input is `invalid_params` before anything runs.
 */
function configuredCall(call: Call, name: string, tool: ToolSchema): Call {
  const parameters = isJsonObject(call.input) ? { ...call.input } : { input: call.input };
  const own: Call = { _tool: name, ...parameters, ...(call.attachments === undefined ? {} : { attachments: call.attachments }) };
  const issues = validateAgainst(callValidationSchema(name, tool), own);
  if (issues.length > 0)
    throw new CallError('invalid_params', `The input of worker_call for the worker "${name}" does not match its parameters: ${formatIssues(issues)}`, {
      toolName: WORKER_CALL_TOOL,
      worker: name,
      issues,
    });
  return { ...own, _tool: call._tool };
}
