#!/usr/bin/env node
/** The `delegate-run` executable: a thin command-line layer over the library (spec/cli.md). */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createRuntime, type DelegatingRuntime } from '../create-runtime.js';
import { isHttpUrl } from '../resolvers/reference-forms.js';
import { parseTimeoutSeconds } from '../models/live-model-options.js';
import type { Model, ModelFactoryOptions } from '../protocol/model.js';
import type { ModelChooser, TierModels } from '../models/choose-model.js';
import { ModelCatalog, TIERS, type Tier } from '../models/model-catalog.js';
import { ModelProviders } from '../models/model-providers.js';
import { ProtocolError, UsageError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import { notJsonPlaceholder, toJsonData } from '../protocol/json-data.js';
import type { LoadedRequest } from '../protocol/load-request.js';
import type { Budget } from '../protocol/budget.js';
import type { Activity, ResumeOptions, RunOptions, RunResult } from '../protocol/runtime.js';
import { journalSession, journalStart, type JournalStore } from '../protocol/journal.js';
import { newId } from '../protocol/ids.js';
import { shareCassette } from '../models/shared-cassette.js';
import { openJournalFile } from '../files/journal-file.js';
import { journalSettings, resumedArguments } from './journal-arguments.js';
import { type JsonlFileSink, jsonlFileSink } from '../files/jsonl-file-sink.js';
import { Tracer } from '../protocol/trace.js';
import { APPROVAL_MODES, createApprovalHook, type ApprovalMode } from '../approvals/approval-policy.js';
import { terminalPrompt } from './approval-prompt.js';
import { isEntryPoint } from './entry.js';
import { checkOutputPaths, type RunInput } from './output-paths.js';
import { jsonUsage } from './cost-report.js';
import { createProgress, type Progress } from './progress.js';
import { TreeCosts } from './tree-costs.js';
import { REPORT_COMMAND, reportMain } from './report.js';
import { EXAMPLES_FLAG, exampleArguments, examplesText } from './examples.js';
import type { QueueChildRunner, QueueChildRunnerOptions } from '../queue/queue-child-runner.js';
import { connectionFor } from '../queue/redis-url.js';
import { treeKey } from '../queue/queue-keys.js';
import { VIEW_COMMAND, viewMain } from './view.js';
import { onePositional, parseOrUsageError } from './command-line.js';

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

/** Exit statuses (CLI-5). */
export const EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 130 } as const;

const USAGE = `Usage: delegate-run <request.json | http(s)://host/path.json> [options]
       delegate-run report <trace.jsonl> [--by run|model|tier|parent] [--json] [--models <models.json>]
         (where the dollars went; a request file named "report" runs as ./report)
       delegate-run view <trace.jsonl> [--out <file.html>] [--open]
         (the trace as one self-contained HTML page; a request file named "view" runs as ./view)
       delegate-run --example <name> [options]
         (runs an example shipped with the package, offline; --examples lists them)

Options:
  --input <json> | --input @file.json   values for the Request's input message
  --model <spec>               openai:<model>, anthropic:<model>, replay:<cassette.json>
  --base-url <url>             an OpenAI-compatible server (also OPENAI_BASE_URL)
  --activities <module>        ES module whose default export is { name: async (call, tool, context) => result } (repeatable)
  --resolve runtime|upfront    delegate resolution timing (default runtime)
  --approve <mode>             interactive | approve_all | strict: how calls of tools with _approval "required"
                               are answered (default interactive on a terminal, strict otherwise)
  --trace <file.jsonl>         write the event trace
  --journal <file.jsonl>       write the trace durably, every event on disk before the run goes on, to resume from
  --resume <file.jsonl>        continue the run a journal holds (its request, input and options), replaying its
                               model answers and finished calls; give no request with it
  --resume-changed             resume even though the request changed since the journal began
  --json                       print one JSON result object on stdout and nothing else there
  --max-steps <n>              model steps per run (default 16)
  --max-depth <n>              delegation depth (default 5)
  --max-concurrency <n>        model calls in flight at once across the run tree (default 128)
  --max-runs <n>               runs per run tree, the top run included (default 2000)
  --budget-tokens <n>          stop the run tree once it has used more tokens than this
  --budget-usd <x>             stop the run tree once it has cost more than this many US dollars
  --allow-host <host[:port]>   hosts URL delegates may be fetched from (repeatable)
  --trust-host <host[:port]>   URL delegates from this host may run local Activities (repeatable)
  --root <dir>                 file delegates are confined to this folder (default: the request's folder)
  --workers-dir <dir>          also write workers created mid-run there, one <name>.json each, never overwriting
  --max-workers <n>            workers a run tree may create with worker_create (default 32)
  --record <cassette.json>     with a live model, write what it answered as a replay cassette
  --tier <tier>=<spec>         the model of a tier (fast, balanced, deep) for delegate calls and config.tier,
                               e.g. --tier fast=openai:gpt-4.1-nano (repeatable; also DELEGATE_MODELS)
  --model-timeout <seconds>    whole-answer timeout per model attempt (default 120; also DELEGATE_MODEL_TIMEOUT)
  --model-retries <n>          retries of transient model failures, timeouts included (default 3)
  --activity-timeout <seconds> fail a call whose Activity runs longer, as activity_error the model sees (default: none)
  --queue <redis://...>        run every delegation as a BullMQ job on this Redis, for delegate-worker processes
  --queue-name <name>          the queue's name (default delegate-run)
  --queue-timeout <seconds>    how long one delegation's job may take (default 3600)
  --quiet                      no progress on stderr
  --help                       this text
`;

const NO_MODEL = `No model was chosen. Choose one of:
  1. --model openai:<model> | anthropic:<model> | replay:<cassette.json>
  2. set OPENAI_API_KEY or ANTHROPIC_API_KEY
  3. put a cassette beside the request, named <request>.cassette.json`;

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

/** Parses `delegate-run` options and positionals, unchecked (reused by `delegate-mcp`). */
export function parseWithOptions(argv: string[]) {
  return parseArgs({
    args: joinNegativeNumbers(argv),
    allowPositionals: true,
    options: {
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
      quiet: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
}

/** Parses the command line; throws UsageError for anything malformed. */
export function parseArguments(argv: string[], cwd: string): ParsedArguments | 'help' {
  const { values, positionals } = parseOrUsageError(() => parseWithOptions(argv));
  if (values.help) return 'help';
  // A resume runs the journal's request; one given anyway is refused once the journal is read (CLI-23).
  const request =
    values.resume === undefined ? onePositional(positionals, 'Expected a request: a .json file or an http(s) URL.', 'request') : positionals.join(' ');
  if (values['resume-changed'] && values.resume === undefined) throw new UsageError('--resume-changed is only for --resume <journal>.');
  if (values.queue === undefined && (values['queue-name'] !== undefined || values['queue-timeout'] !== undefined)) {
    throw new UsageError(`--${values['queue-name'] === undefined ? 'queue-timeout' : 'queue-name'} is only for --queue <redis://...>.`);
  }
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

/** The queue options of `--queue`, `--queue-name` and `--queue-timeout` (CLI-24): this process relays its tree's remote events. */
function queueOptions(args: ParsedArguments, say: (line: string) => void): QueueChildRunnerOptions {
  return {
    url: args.queue as string,
    relay: true,
    // A Redis outage is said once, whatever --quiet says: it explains the failed calls that follow (QUEUE-34).
    say: (line) => say(`delegate-run: ${line}`),
    ...(args.queueName === undefined ? {} : { queueName: args.queueName }),
    ...(args.queueTimeoutMs === undefined ? {} : { timeoutMs: args.queueTimeoutMs }),
  };
}

/** Runs the command line; resolves to the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  // A subcommand is its exact name as the first argument (CLI-17); a file of that name is `./report`.
  if (argv[0] === REPORT_COMMAND) return reportMain(argv.slice(1), io);
  if (argv[0] === VIEW_COMMAND) return viewMain(argv.slice(1), io);
  // The shipped examples (CLI-29): `--examples` lists them, `--example <name>` stands for the command line that runs one.
  if (argv.includes(EXAMPLES_FLAG)) {
    io.stdout.write(examplesText());
    return EXIT.ok;
  }
  let example: string[] | undefined;
  try {
    example = exampleArguments(argv);
  } catch (error) {
    return reportSetupError(error, argv.includes('--json'), io, (line) => io.stderr.write(`${line}\n`));
  }
  if (example) return main(example, io);
  const say = (line: string) => io.stderr.write(`${line}\n`);
  let args: ParsedArguments | 'help';
  let resumed: ReturnType<typeof openResumed> | undefined;
  try {
    args = parseArguments(argv, io.cwd);
  } catch (error) {
    // --json promises one result object on stdout, even when the command line itself is wrong.
    if (argv.includes('--json'))
      io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'usage_error', message: (error as Error).message }, run: null })}\n`);
    say(`delegate-run: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (args === 'help') {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (args.resume !== undefined) {
    try {
      resumed = openResumed(args, io.cwd);
    } catch (error) {
      return reportSetupError(error, args.json, io, say);
    }
    args = resumed.args;
  }
  const tracer = new Tracer();
  // Loaded once, below: it prices the answers, chooses the models and names the summary's tiers.
  let catalog: ModelCatalog | undefined;
  // The figures of the whole tree, a resume's included the journal's earlier work (JOURNAL-12): the summary's and --json's.
  const costs = new TreeCosts(resumed?.store.events);
  costs.follow(tracer);
  const progress = createProgress(tracer, io.stderr, { env: io.env, quiet: args.quiet, tierOf: (model) => catalog?.tierOf(model), costs });
  // Said through the progress view, so a live tree on screen stays intact.
  io.signal?.addEventListener('abort', () => progress.log('Cancelling… (press Ctrl-C again to quit at once)'), { once: true });
  let result: RunResult | undefined;
  let runtime: DelegatingRuntime | undefined;
  let sink: JsonlFileSink | undefined;
  let journal: JournalStore | undefined = resumed?.store;
  let queue: QueueChildRunner | undefined;
  let stopIdle: (() => void) | undefined;
  const replayed = countReplayed(tracer);
  try {
    const requestPath = isHttpUrl(args.request) ? args.request : resolve(io.cwd, args.request);
    const root = args.root ? resolve(io.cwd, args.root) : isHttpUrl(args.request) ? io.cwd : dirname(requestPath);
    const allowHosts = [...args.allowHosts];
    if (isHttpUrl(args.request)) allowHosts.push(new URL(args.request).host);
    const activities = await loadActivities(args.activities, io.cwd);
    const confirm = approvalHook(args.approve, io, progress);
    // The catalog honours DELEGATE_MODELS of the command's own environment and folder (DEL-28).
    catalog = ModelCatalog.load({ env: io.env, cwd: io.cwd });
    runtime = runtimeFor(args, io, { root, allowHosts, activities, catalog });
    // An Activity whose promise nothing left in the process can settle fails its call and run (CLI-27, ERR-8).
    const pending = runtime.pendingActivities;
    stopIdle = io.onIdle?.(() => pending.failStalled().length > 0);
    // Every delegation becomes a job for delegate-worker processes (CLI-24, QUEUE-1); Redis is reached now or never.
    // Loaded only then: BullMQ and its Redis client cost every other run nothing.
    queue = args.queue === undefined ? undefined : await (await import('../queue/queue-child-runner.js')).QueueChildRunner.connect(queueOptions(args, say));
    runtime.useChildRunner(queue);
    const loaded = await loadEntry(runtime, requestPath);
    const { model, runId } = queuedTop(queue, resumed, chooseModel(args, loaded.loaded, runtime.models as ModelChooser, io, say));
    // The run's inputs have loaded: only now may the trace replace a file, and never one of them (CLI-15).
    sink = openCheckedTrace(args, io.cwd, model);
    if (sink) tracer.subscribe(sink);
    if (resumed) {
      result = await runtime.resume(resumed.store, { ...resumeOptionsFor(args, io), ...(model ? { model } : {}), request: loaded.loaded, tracer, confirm });
    } else {
      journal = args.journal === undefined ? undefined : openJournalFile(resolve(io.cwd, args.journal), 'create');
      const journaled = journal ? { journal, journalSettings: { ...journalSettings(args, io.cwd, root) } } : {};
      result = await runtime.run(loaded.loaded, {
        ...runOptionsFor(args, io),
        ...(model ? { model } : {}),
        tracer,
        confirm,
        trusted: loaded.trusted,
        ...(runId === undefined ? {} : { runId }),
        ...journaled,
      });
    }
  } catch (error) {
    progress.finish();
    // A run that never started still leaves its trace, empty (TRACE-2), unless the path is refused.
    if (!sink && args.trace !== undefined) {
      try {
        sink = openCheckedTrace(args, io.cwd);
      } catch {
        // The error that stopped the run is the one to report.
      }
    }
    stopIdle?.();
    sink?.close();
    journal?.close();
    await runtime?.resolvers.close();
    await queue?.close();
    return reportSetupError(error, args.json, io, say);
  }
  stopIdle?.();
  sink?.close();
  journal?.close();
  await runtime.resolvers.close();
  await queue?.close();
  progress.finish(result);
  // A resume says what it took from the journal instead of paying for it again (CLI-23).
  if (resumed && !args.quiet && !args.json) say(replayedSentence(resumed.path, replayed));
  return reportResult(result, args, io, { sink, journal, runs: costs.report().total.runs, ...(resumed ? { replayed } : {}) }, say);
}

/**
 * The top run's model and id on a queue (QUEUE-17): a replayed model shares its cassette with the
 * tree's other processes through claims named by the tree's session (QUEUE-12), so a new tree's id
 * is drawn here rather than by the run. Without a queue, the model as chosen and no id.
 */
function queuedTop(
  queue: QueueChildRunner | undefined,
  resumed: { store: JournalStore; run: string } | undefined,
  model: Model | undefined,
): { model: Model | undefined; runId?: string } {
  if (!queue) return { model };
  const runId = resumed ? resumed.run : newId('run');
  const tree = treeKey(runId, resumed ? journalSession(resumed.store.events) : 0);
  return { model: model && shareCassette(model, queue.cassetteClaims(tree)), ...(resumed ? {} : { runId }) };
}

/** Opens the journal `--resume` names and takes the command line it recorded (CLI-23); throws a UsageError for a journal that cannot be resumed. */
function openResumed(args: ParsedArguments, cwd: string): { store: JournalStore; args: ParsedArguments; path: string; run: string } {
  const path = resolve(cwd, args.resume as string);
  const store = openJournalFile(path, 'resume');
  try {
    const start = journalStart(store);
    return { store, path, run: start.run, args: resumedArguments(args, args.request === '' ? [] : [args.request], start, args.resume as string) };
  } catch (error) {
    store.close();
    throw error;
  }
}

/** Counts what a resumed run takes from its journal: model answers and finished calls (JOURNAL-4, JOURNAL-5). */
function countReplayed(tracer: Tracer): { modelCalls: number; calls: number } {
  const counts = { modelCalls: 0, calls: 0 };
  tracer.subscribe((event) => {
    if (event.event === 'model.replayed') counts.modelCalls += 1;
    else if (event.event === 'call.replayed') counts.calls += 1;
  });
  return counts;
}

function replayedSentence(path: string, replayed: { modelCalls: number; calls: number }): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  return `Resumed from ${path}: ${plural(replayed.modelCalls, 'model call')} replayed from the journal (paid once, counted in the cost), ${plural(replayed.calls, 'finished call')} not run again.`;
}

/** The run options a resume may be given again (JOURNAL-3): the limits, and the cancel signal. */
function resumeOptionsFor(args: ParsedArguments, io: CliIo): ResumeOptions {
  return {
    ...limitsFor(args, io),
    ...(args.resumeChanged ? { changed: true } : {}),
  };
}

/** What the command wrote beside its result: the trace, the journal, and what a resume replayed. */
interface Written {
  sink: JsonlFileSink | undefined;
  journal: JournalStore | undefined;
  replayed?: { modelCalls: number; calls: number };
  /** Runs in the tree, as the summary and `delegate-run report` count them (CLI-4). */
  runs: number;
}

/** Prints a finished run's result (CLI-4) and says its exit status; a trace or journal that failed to write fails the command (TRACE-14, CLI-22). */
function reportResult(result: RunResult, args: ParsedArguments, io: CliIo, written: Written, say: (line: string) => void): number {
  const { sink, journal } = written;
  // A trace that could not be written is said once, and fails an otherwise successful command (TRACE-14).
  const traceError = sink?.error ? `the trace ${resolve(io.cwd, args.trace as string)} is incomplete: writing it failed (${sink.error.message}).` : undefined;
  if (traceError) say(`delegate-run: ${traceError}`);
  const journalError = journal?.error ? `the journal ${journal.location} is incomplete: writing it failed (${journal.error.message}).` : undefined;
  if (journalError) say(`delegate-run: ${journalError}`);
  const traceField = {
    ...(traceError ? { traceError } : {}),
    ...(journalError ? { journalError } : {}),
    ...(written.replayed ? { replayed: written.replayed } : {}),
  };
  if (result.ok) {
    const output = printable(result.output);
    // `meta` only when the Request had a meta message (MSG-23, CLI-4).
    const meta = result.meta === undefined ? {} : { meta: printable(result.meta) };
    // Money rounded as every JSON output rounds it (CLI-28); runs counted as the summary counts them (CLI-4).
    const usage = jsonUsage(result.usageTotal, written.runs);
    if (args.json) io.stdout.write(`${JSON.stringify({ ok: true, output, ...meta, usage, run: result.run, ...traceField })}\n`);
    else io.stdout.write(`${typeof output === 'string' ? output : JSON.stringify(output, null, 2)}\n`);
    return traceError || journalError ? EXIT.failed : EXIT.ok;
  }
  // A run that needed a model and had none: the command line says how to choose one (CLI-3).
  const error = result.error.data.reason === 'no_model' ? new UsageError(NO_MODEL, result.error.data) : result.error;
  if (args.json) io.stdout.write(`${JSON.stringify({ ok: false, error: error.toJSON(), run: result.run, ...traceField })}\n`);
  else say(`delegate-run: ${error.code}: ${error.message}`);
  return exitFor(error);
}

/** An output as JSON data that can always be printed: parts JSON cannot hold become placeholders, nothing at all is `null` (CLI-4). */
function printable(output: unknown): unknown {
  return toJsonData(output, { replace: notJsonPlaceholder }) ?? null;
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

/** The approval policy: --approve, else interactive when a person is at a terminal, else strict. */
function approvalHook(mode: ApprovalMode | undefined, io: CliIo, progress: Progress) {
  const terminal = Boolean(io.stdin?.isTTY) && Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const chosen = mode ?? (terminal ? 'interactive' : 'strict');
  if (chosen !== 'interactive') return createApprovalHook({ mode: chosen });
  if (!io.stdin?.isTTY) throw new UsageError('--approve interactive needs a terminal to ask at; use approve_all or strict when input is not a terminal.');
  return createApprovalHook({ mode: 'interactive', prompt: terminalPrompt({ input: io.stdin, output: io.stderr, aside: (work) => progress.aside(work) }) });
}

function exitFor(error: ProtocolError): number {
  if (error.code === 'cancelled_by_user') return EXIT.cancelled;
  if (error.code === 'usage_error' || error.code === 'invalid_request') return EXIT.usage;
  return EXIT.failed;
}

function reportSetupError(error: unknown, json: boolean, io: CliIo, say: (line: string) => void): number {
  const protocolError = error instanceof ProtocolError ? error : new UsageError(error instanceof Error ? error.message : String(error));
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: protocolError.toJSON(), run: null })}\n`);
  else say(`delegate-run: ${protocolError.message}`);
  // Nothing ran yet: a bad request, reference, model choice or activities module is a usage problem.
  return protocolError.code === 'cancelled_by_user' ? EXIT.cancelled : EXIT.usage;
}

/** The signals that cancel a run, and the exit status of each: 128 + its number (CLI-13). */
const SIGNAL_EXIT = { SIGINT: EXIT.cancelled, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Exits with `status` once stdout and stderr have taken everything written to them (output piped
 * elsewhere is never cut short), without waiting for timers or sockets an Activity left open (CLI-16).
 */
function exitWhenWritten(status: number): void {
  process.exitCode = status;
  let pending = 2;
  for (const stream of [process.stdout, process.stderr]) {
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      if (--pending === 0) process.exit(status);
    };
    stream.once('error', settle);
    stream.write('', settle);
  }
}

/**
 * Wires the process's `beforeExit` (CLI-27): it is emitted when the event loop has emptied, so a
 * command still pending then can never finish. The listeners (the runtime's pending Activities)
 * are asked to fail what waits; when none can, the command fails at once, exit 1, never 0.
 */
function idleWatch(isPending: () => boolean): CliIo['onIdle'] {
  const listeners = new Set<() => boolean>();
  let failed = false;
  process.on('beforeExit', () => {
    if (failed || !isPending()) return;
    let woken = false;
    for (const listener of listeners) woken = listener() || woken;
    if (woken) return;
    failed = true;
    process.stderr.write('delegate-run: the run can never finish: it is still pending, and nothing is left in the process that could settle it.\n');
    exitWhenWritten(EXIT.failed);
  });
  return (listener) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };
}

if (isEntryPoint(import.meta.url)) {
  const controller = new AbortController();
  let pending = true;
  let received: keyof typeof SIGNAL_EXIT | undefined;
  for (const name of Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]) {
    process.on(name, () => {
      // The first signal cancels the run; a second quits at once, with its own status.
      if (received) process.exit(SIGNAL_EXIT[name]);
      received = name;
      controller.abort();
    });
  }
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    stdin: process.stdin,
    onIdle: idleWatch(() => pending),
  }).then(
    (status) => {
      pending = false;
      exitWhenWritten(received && status === EXIT.cancelled ? SIGNAL_EXIT[received] : status);
    },
    (error: unknown) => {
      pending = false;
      process.stderr.write(`delegate-run: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      exitWhenWritten(EXIT.failed);
    },
  );
}
