/** What every command that runs Requests shares (`delegate-run`, `delegate-mcp`, `delegate-worker`): the command line, the runtime it sets up, the trace it opens (spec/cli.md). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { APPROVAL_MODES, type ApprovalMode } from '../approvals/approval-policy.js';
import { createRuntime, type DelegatingRuntime } from '../create-runtime.js';
import { type JsonlFileSink, jsonlFileSink } from '../files/jsonl-file-sink.js';
import type { ModelChooser, TierModels } from '../models/choose-model.js';
import { parseTimeoutSeconds } from '../models/live-model-options.js';
import { type ModelCatalog, TIERS, type Tier } from '../models/model-catalog.js';
import { ModelProviders } from '../models/model-providers.js';
import type { Budget } from '../protocol/budget.js';
import type { Activity, ResumeOptions, RunOptions } from '../protocol/contracts.js';
import { UsageError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import type { LoadedRequest } from '../protocol/messages/load-request.js';
import type { Model, ModelFactoryOptions } from '../protocol/model.js';
import { MAX_KEEP_SECONDS } from '../queue/key-lifetimes.js';
import type { QueueChildRunner, QueueChildRunnerOptions } from '../queue/queue-child-runner.js';
import { treeKey } from '../queue/queue-keys.js';
import { shareCassette } from '../models/shared-cassette.js';
import { newId } from '../protocol/ids.js';
import { QUEUE_KEY_VARIABLE } from '../queue/queue-job.js';
import { connectionFor } from '../queue/redis-url.js';
import { isHttpUrl } from '../resolvers/reference-forms.js';
import { onePositional, parseCommandLine } from './command-line.js';
import { checkOutputPaths, type RunInput } from './output-paths.js';
import { otelAlone } from './telemetry-option.js';

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Cancels the run (the executable wires SIGINT to it). */
  signal?: AbortSignal;
  /** Where interactive approvals are answered (default: none, so approvals are strict). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /**
   * Subscribes to the process running out of work while the command is pending (the executable
   * wires `process.on('beforeExit')`, CLI-27); the listener returns true when it gave the run a way
   * on. Returns the function that unsubscribes.
   */
  onIdle?: (listener: () => boolean) => () => void;
}

export { EXIT } from './command-line.js';

/** The command line of `delegate-run`, parsed (reused by `delegate-mcp`, MCP-8). */
export interface ParsedArguments {
  request: string;
  input?: unknown;
  /** The file `--input @file` names, made absolute. */
  inputFile?: string;
  model?: string;
  baseUrl?: string;
  activities: string[];
  resolve?: 'runtime' | 'upfront';
  approve?: ApprovalMode;
  trace?: string;
  /** `--journal`: the durable trace a resume continues from (CLI-22). */
  journal?: string;
  /** `--resume`: the journal to continue (CLI-23). */
  resume?: string;
  resumeChanged: boolean;
  json: boolean;
  maxSteps?: number;
  maxDepth?: number;
  maxConcurrency?: number;
  maxRuns?: number;
  budget?: Budget;
  allowHosts: string[];
  trustHosts: string[];
  root?: string;
  /** `--workers-dir`: where workers created mid-run are also written (WRK-8, CLI-19). */
  workersDir?: string;
  /** `--max-workers`: the workers a run tree may create (WRK-11, CLI-19). */
  maxWorkers?: number;
  record?: string;
  /** `--tier` overrides of the tier → model choice (DEL-28). */
  tiers: TierModels;
  quiet: boolean;
  modelTimeoutMs?: number;
  modelRetries?: number;
  /** `--activity-timeout`, in ms (TOOL-24, CLI-26). */
  activityTimeoutMs?: number;
  /** `--queue`: the Redis URL delegations go to as jobs (CLI-24, QUEUE-4). */
  queue?: string;
  /** `--queue-name` (default `delegate-run`). */
  queueName?: string;
  /** `--queue-timeout`, in ms. */
  queueTimeoutMs?: number;
  /** `--queue-heartbeat`, in ms (QUEUE-25). */
  queueHeartbeatMs?: number;
  /** `--queue-keep`, in seconds (QUEUE-26). */
  queueKeepSeconds?: number;
  /** `--otel [endpoint]`: `''` for the flag alone (TEL-1). */
  otel?: string;
  /** `--otel-content`: prompts and answers in the spans (TEL-4). */
  otelContent?: boolean;
}

/** Reads a flag's whole number of at least `minimum`; throws a UsageError naming the flag otherwise. */
export function wholeNumber(value: string | undefined, flag: string, minimum: number): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < minimum) throw new UsageError(`${flag} expects a whole number of at least ${minimum}, got "${value}".`);
  return number;
}

function readInput(value: string | undefined, cwd: string): unknown {
  if (value === undefined) return undefined;
  const fromFile = value.startsWith('@');
  const source = fromFile ? resolve(cwd, value.slice(1)) : '--input';
  let text = value;
  if (fromFile) {
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw new UsageError(`--input ${value}: cannot read ${source}: ${(error as Error).message}`);
    }
  }
  const parsed = parseJson(text);
  if (!parsed.ok) throw new UsageError(`${source}:${parsed.line}:${parsed.column}: ${parsed.message}`);
  return parsed.value;
}

/**
 * Joins an option and a following negative number (`--max-steps -5` → `--max-steps=-5`), which
 * parseArgs would otherwise refuse as "ambiguous", so every option taking a value, numeric ones
 * included, gets the number and its own range check (CLI-11).
 */
export function joinNegativeNumbers(argv: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--') return [...joined, ...argv.slice(index)];
    const next = argv[index + 1];
    if (/^--[^=]+$/.test(argument) && next !== undefined && /^-\.?\d/.test(next)) {
      joined.push(`${argument}=${next}`);
      index++;
    } else joined.push(argument);
  }
  return joined;
}

/** The options of `delegate-run` (CLI-2), as node's `parseArgs` takes them. */
const RUN_OPTIONS = {
  input: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  activities: { type: 'string', multiple: true },
  resolve: { type: 'string' },
  approve: { type: 'string' },
  trace: { type: 'string' },
  journal: { type: 'string' },
  resume: { type: 'string' },
  'resume-changed': { type: 'boolean' },
  json: { type: 'boolean' },
  'max-steps': { type: 'string' },
  'max-depth': { type: 'string' },
  'max-concurrency': { type: 'string' },
  'max-runs': { type: 'string' },
  'budget-tokens': { type: 'string' },
  'budget-usd': { type: 'string' },
  'allow-host': { type: 'string', multiple: true },
  'trust-host': { type: 'string', multiple: true },
  root: { type: 'string' },
  'workers-dir': { type: 'string' },
  'max-workers': { type: 'string' },
  record: { type: 'string' },
  tier: { type: 'string', multiple: true },
  'model-timeout': { type: 'string' },
  'model-retries': { type: 'string' },
  'activity-timeout': { type: 'string' },
  queue: { type: 'string' },
  'queue-name': { type: 'string' },
  'queue-timeout': { type: 'string' },
  'queue-heartbeat': { type: 'string' },
  'queue-keep': { type: 'string' },
  otel: { type: 'string' },
  'otel-content': { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * Parses `delegate-run` options and positionals, unchecked (reused by `delegate-mcp`, whose own
 * options are `more`); an unknown option is named with the nearest known one (CLI-29).
 */
export function parseWithOptions(argv: string[], more: readonly string[] = []) {
  return parseCommandLine({ args: otelAlone(joinNegativeNumbers(argv)), allowPositionals: true, options: RUN_OPTIONS }, more);
}

/** Parses the command line; throws UsageError for anything malformed. */
export function parseArguments(argv: string[], cwd: string): ParsedArguments | 'help' | 'version' {
  const { values, positionals } = parseWithOptions(argv);
  if (values.help) return 'help';
  if (values.version) return 'version';
  // A resume runs the journal's request; one given anyway is refused once the journal is read (CLI-23).
  const request =
    values.resume === undefined ? onePositional(positionals, 'Expected a request: a .json file or an http(s) URL.', 'request') : positionals.join(' ');
  if (values['resume-changed'] && values.resume === undefined) throw new UsageError('--resume-changed is only for --resume <journal>.');
  const queueOnly = (['queue-name', 'queue-timeout', 'queue-heartbeat', 'queue-keep'] as const).find((flag) => values[flag] !== undefined);
  if (values.queue === undefined && queueOnly !== undefined) throw new UsageError(`--${queueOnly} is only for --queue <redis://...>.`);
  if (values.queue !== undefined) connectionFor(values.queue);
  if (values.resolve !== undefined && values.resolve !== 'runtime' && values.resolve !== 'upfront') {
    throw new UsageError(`--resolve expects runtime or upfront, got "${values.resolve}".`);
  }
  if (values.approve !== undefined && !(APPROVAL_MODES as readonly string[]).includes(values.approve)) {
    throw new UsageError(`--approve expects one of ${APPROVAL_MODES.join(', ')}, got "${values.approve}".`);
  }
  return {
    request,
    input: readInput(values.input, cwd),
    ...(values.input?.startsWith('@') ? { inputFile: resolve(cwd, values.input.slice(1)) } : {}),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
    activities: values.activities ?? [],
    ...(values.resolve === undefined ? {} : { resolve: values.resolve as 'runtime' | 'upfront' }),
    ...(values.approve === undefined ? {} : { approve: values.approve as ApprovalMode }),
    ...(values.trace === undefined ? {} : { trace: values.trace }),
    ...(values.journal === undefined ? {} : { journal: values.journal }),
    ...(values.resume === undefined ? {} : { resume: values.resume }),
    resumeChanged: values['resume-changed'] ?? false,
    json: values.json ?? false,
    ...(values['max-steps'] === undefined ? {} : { maxSteps: wholeNumber(values['max-steps'], '--max-steps', 1) as number }),
    ...(values['max-depth'] === undefined ? {} : { maxDepth: wholeNumber(values['max-depth'], '--max-depth', 0) as number }),
    ...(values['max-concurrency'] === undefined ? {} : { maxConcurrency: wholeNumber(values['max-concurrency'], '--max-concurrency', 1) as number }),
    ...(values['max-runs'] === undefined ? {} : { maxRuns: wholeNumber(values['max-runs'], '--max-runs', 1) as number }),
    ...budgetOf(values['budget-tokens'], values['budget-usd']),
    allowHosts: values['allow-host'] ?? [],
    trustHosts: values['trust-host'] ?? [],
    ...(values.root === undefined ? {} : { root: values.root }),
    ...(values.record === undefined ? {} : { record: values.record }),
    ...(values['workers-dir'] === undefined ? {} : { workersDir: resolve(cwd, values['workers-dir']) }),
    ...(values['max-workers'] === undefined ? {} : { maxWorkers: wholeNumber(values['max-workers'], '--max-workers', 0) as number }),
    tiers: tierModels(values.tier ?? []),
    quiet: values.quiet ?? false,
    ...(values['model-timeout'] === undefined ? {} : { modelTimeoutMs: parseTimeoutSeconds(values['model-timeout'], '--model-timeout') }),
    ...(values['model-retries'] === undefined ? {} : { modelRetries: wholeNumber(values['model-retries'], '--model-retries', 0) as number }),
    ...(values['activity-timeout'] === undefined ? {} : { activityTimeoutMs: parseTimeoutSeconds(values['activity-timeout'], '--activity-timeout') }),
    ...(values.queue === undefined ? {} : { queue: values.queue }),
    ...(values['queue-name'] === undefined ? {} : { queueName: values['queue-name'] }),
    ...(values['queue-timeout'] === undefined ? {} : { queueTimeoutMs: parseTimeoutSeconds(values['queue-timeout'], '--queue-timeout') }),
    ...(values['queue-heartbeat'] === undefined ? {} : { queueHeartbeatMs: parseTimeoutSeconds(values['queue-heartbeat'], '--queue-heartbeat') }),
    ...(values['queue-keep'] === undefined ? {} : { queueKeepSeconds: keepSeconds(values['queue-keep']) }),
    ...(values.otel === undefined ? {} : { otel: values.otel }),
    ...(values['otel-content'] ? { otelContent: true } : {}),
  };
}

/**
 * The `--tier <tier>=<spec>` options (DEL-28, CLI-18): each names a tier of the catalog and a model
 * spec `<provider>:<model>`; a later one for the same tier wins.
 */
export function tierModels(given: readonly string[]): TierModels {
  const tiers: TierModels = {};
  for (const option of given) {
    const match = /^([^=]*)=(.*)$/.exec(option);
    const tier = match?.[1] as Tier | undefined;
    const spec = match?.[2] ?? '';
    if (!tier || !TIERS.includes(tier)) {
      throw new UsageError(`--tier expects <tier>=<provider>:<model> with a tier of ${TIERS.join(', ')}, got "${option}".`);
    }
    if (!/^[^:\s]+:\S+$/.test(spec)) throw new UsageError(`--tier ${tier}= expects a model spec <provider>:<model>, got "${spec}".`);
    tiers[tier] = spec;
  }
  return tiers;
}

function budgetOf(tokens: string | undefined, usd: string | undefined): { budget?: Budget } {
  if (tokens === undefined && usd === undefined) return {};
  const budget: Budget = {};
  if (tokens !== undefined) budget.tokens = wholeNumber(tokens, '--budget-tokens', 1) as number;
  if (usd !== undefined) {
    const dollars = /^\d+(\.\d+)?$/.test(usd) ? Number(usd) : Number.NaN;
    if (!(dollars > 0)) throw new UsageError(`--budget-usd expects a positive amount of US dollars, got "${usd}".`);
    budget.costUsd = dollars;
  }
  return { budget };
}

/** Imports the `--activities` modules into one record of Activities (CLI-2). */
export async function loadActivities(modules: string[], cwd: string): Promise<Record<string, Activity>> {
  const activities: Record<string, Activity> = {};
  for (const module of modules) {
    const path = resolve(cwd, module);
    let loaded: { default?: unknown };
    try {
      loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (error) {
      throw new UsageError(`--activities ${module}: cannot import ${path}: ${(error as Error).message}`);
    }
    const record = loaded.default;
    if (typeof record !== 'object' || record === null)
      throw new UsageError(`--activities ${module}: the default export must be a record { name: async (call, tool, context) => result }.`);
    for (const [name, activity] of Object.entries(record)) {
      if (typeof activity !== 'function') throw new UsageError(`--activities ${module}: "${name}" is not a function.`);
      activities[name] = activity as Activity;
    }
  }
  return activities;
}

/** Refuses a `--tier` model of a provider no factory is registered for, before anything runs (CLI-18). */
function checkTierProviders(tiers: TierModels, providers: ModelProviders): void {
  for (const [tier, spec] of Object.entries(tiers)) {
    const provider = spec.slice(0, spec.indexOf(':'));
    if (!providers.has(provider)) {
      throw new UsageError(`--tier ${tier}=${spec}: the provider "${provider}:" is unknown; use one of ${providers.prefixes().join(', ')}.`);
    }
  }
}

/** Picks the top run's model by the one policy (CLI-3), saying so when a cassette is replayed by default. */
export function chooseModel(args: ParsedArguments, loaded: LoadedRequest, chooser: ModelChooser, io: CliIo, say: (line: string) => void): Model | undefined {
  const choice = chooser.forTopRun(loaded.document, {
    ...(args.model ? { spec: args.model } : {}),
    location: loaded.location,
    isFile: !isHttpUrl(loaded.location),
    env: io.env,
    name: loaded.name,
  });
  if (choice.source === 'cassette') say(`No --model given and no API key set: replaying ${choice.spec?.slice('replay:'.length)}.`);
  return choice.model;
}

/** The runtime of one command: its root, hosts and Activities, and the models the command line chose (CLI-3, CLI-18). */
export function runtimeFor(
  args: ParsedArguments,
  io: CliIo,
  setting: { root: string; allowHosts: string[]; activities: Record<string, Activity>; catalog: ModelCatalog },
): DelegatingRuntime {
  const providers = new ModelProviders({ registry: setting.catalog });
  checkTierProviders(args.tiers, providers);
  const factoryOptions: ModelFactoryOptions = {
    cwd: io.cwd,
    env: io.env,
    ...(args.baseUrl ? { baseUrl: args.baseUrl } : {}),
    ...(args.record ? { record: resolve(io.cwd, args.record) } : {}),
    ...(args.modelTimeoutMs === undefined ? {} : { timeoutMs: args.modelTimeoutMs }),
    ...(args.modelRetries === undefined ? {} : { maxRetries: args.modelRetries }),
  };
  return createRuntime({
    root: setting.root,
    allowHosts: setting.allowHosts,
    trustHosts: args.trustHosts,
    activities: setting.activities,
    models: { providers, options: factoryOptions, tiers: args.tiers },
    ...(args.workersDir === undefined ? {} : { workersDir: args.workersDir }),
    ...(args.maxWorkers === undefined ? {} : { maxWorkers: args.maxWorkers }),
    ...(args.activityTimeoutMs === undefined ? {} : { activityTimeoutMs: args.activityTimeoutMs }),
  });
}

/** The entry Request: a file under the root, or a URL, which is trusted only as its host is (DEL-7). */
export async function loadEntry(runtime: DelegatingRuntime, requestPath: string): Promise<{ loaded: LoadedRequest; trusted: boolean }> {
  if (!isHttpUrl(requestPath)) return { loaded: await runtime.load(requestPath), trusted: true };
  const resolved = await runtime.resolvers.resolve(requestPath, { toolName: '(request)', tool: {} });
  return { loaded: { document: resolved.document, location: resolved.location, name: resolved.name }, trusted: resolved.trusted };
}

/** The limits the command line sets, which a resume may raise too (JOURNAL-3): steps, concurrency, runs, budget, and the cancel signal. */
function limitsFor(args: ParsedArguments, io: CliIo): Pick<RunOptions, 'maxSteps' | 'maxConcurrency' | 'maxRuns' | 'budget' | 'signal'> {
  return {
    ...(args.maxSteps === undefined ? {} : { maxSteps: args.maxSteps }),
    ...(args.maxConcurrency === undefined ? {} : { maxConcurrency: args.maxConcurrency }),
    ...(args.maxRuns === undefined ? {} : { maxRuns: args.maxRuns }),
    ...(args.budget === undefined ? {} : { budget: args.budget }),
    ...(io.signal ? { signal: io.signal } : {}),
  };
}

/** The run options the command line sets: input, bounds, budget, resolution and the cancel signal. */
export function runOptionsFor(args: ParsedArguments, io: CliIo): RunOptions {
  return {
    ...limitsFor(args, io),
    ...(args.input === undefined ? {} : { input: args.input }),
    ...(args.maxDepth === undefined ? {} : { maxDepth: args.maxDepth }),
    ...(args.resolve === undefined ? {} : { resolve: args.resolve }),
  };
}

/** `--queue-keep`: whole seconds from 1 to a day (QUEUE-26). */
function keepSeconds(value: string): number {
  const seconds = wholeNumber(value, '--queue-keep', 1) as number;
  if (seconds > MAX_KEEP_SECONDS) throw new UsageError(`--queue-keep expects at most ${MAX_KEEP_SECONDS} seconds (a day), got "${value}".`);
  return seconds;
}

/**
 * The queue options of the `--queue…` flags (CLI-24): this process relays its tree's remote events
 * and keeps its trees alive (QUEUE-25); its jobs are signed with `DELEGATE_QUEUE_KEY` when it is set
 * (QUEUE-24).
 */
export function queueOptions(args: ParsedArguments, env: CliIo['env'], say: (line: string) => void): QueueChildRunnerOptions {
  const key = env[QUEUE_KEY_VARIABLE] || undefined;
  return {
    url: args.queue as string,
    relay: true,
    // A Redis outage is said once, whatever --quiet says: it explains the failed calls that follow (QUEUE-34).
    say: (line) => say(`delegate-run: ${line}`),
    ...(key === undefined ? {} : { key }),
    ...(args.queueName === undefined ? {} : { queueName: args.queueName }),
    ...(args.queueTimeoutMs === undefined ? {} : { timeoutMs: args.queueTimeoutMs }),
    ...(args.queueHeartbeatMs === undefined ? {} : { heartbeatMs: args.queueHeartbeatMs }),
    ...(args.queueKeepSeconds === undefined ? {} : { keepSeconds: args.queueKeepSeconds }),
  };
}

/**
 * The top run's model and id on a queue (QUEUE-17): a replayed model shares its cassette with the
 * tree's other processes through claims named by the tree's session (QUEUE-12), so a new tree's id
 * is drawn here rather than by the run; a resumed tree (`resumed`) keeps its top run's id. Without a
 * queue, the model as chosen and no id.
 */
export function queuedTop(
  queue: QueueChildRunner | undefined,
  model: Model | undefined,
  resumed?: { run: string; session: number },
): { model: Model | undefined; runId?: string } {
  if (!queue) return { model };
  const runId = resumed ? resumed.run : newId('run');
  const tree = treeKey(runId, resumed ? resumed.session : 0);
  return { model: model && shareCassette(model, queue.cassetteClaims(tree)), ...(resumed ? {} : { runId }) };
}

/** The run options a resume may be given again (JOURNAL-3): the limits, and the cancel signal. */
export function resumeOptionsFor(args: ParsedArguments, io: CliIo): ResumeOptions {
  return {
    ...limitsFor(args, io),
    ...(args.resumeChanged ? { changed: true } : {}),
  };
}

/**
 * Opens the trace file once CLI-15 allows it; a path that cannot be opened for writing is bad usage,
 * said in one line (TRACE-14).
 */
export function openCheckedTrace(args: ParsedArguments, cwd: string, model?: Model): JsonlFileSink | undefined {
  const outputs = [
    ...(args.trace === undefined ? [] : [{ flag: '--trace' as const, given: args.trace, path: resolve(cwd, args.trace) }]),
    ...(args.journal === undefined ? [] : [{ flag: '--journal' as const, given: args.journal, path: resolve(cwd, args.journal) }]),
    ...(args.record === undefined ? [] : [{ flag: '--record' as const, given: args.record, path: resolve(cwd, args.record) }]),
  ];
  checkOutputPaths(outputs, runInputs(args, cwd, model?.id.startsWith('replay:') ? model.id.slice('replay:'.length) : undefined));
  const given = args.trace;
  if (given === undefined) return undefined;
  const path = resolve(cwd, given);
  try {
    return jsonlFileSink(path);
  } catch (error) {
    throw new UsageError(`--trace ${given}: cannot open ${path} for writing: ${(error as Error).message}.`);
  }
}

/**
 * The files the run reads that the command line names: the request, the input, the Activities
 * modules, and the cassette replayed (by --model, or `replayed`, the one chosen beside the request).
 */
function runInputs(args: ParsedArguments, cwd: string, replayed: string | undefined): RunInput[] {
  const inputs: RunInput[] = [];
  if (!isHttpUrl(args.request)) inputs.push({ path: resolve(cwd, args.request), what: 'the request' });
  if (args.inputFile) inputs.push({ path: args.inputFile, what: 'the --input file' });
  for (const module of args.activities) inputs.push({ path: resolve(cwd, module), what: 'an --activities module' });
  if (args.model?.startsWith('replay:')) inputs.push({ path: resolve(cwd, args.model.slice('replay:'.length)), what: 'the replayed cassette' });
  if (replayed !== undefined) inputs.push({ path: replayed, what: 'the replayed cassette' });
  if (args.resume !== undefined) inputs.push({ path: resolve(cwd, args.resume), what: 'the journal resumed' });
  return inputs;
}
