#!/usr/bin/env node
/** The `delegate-worker` executable: runs the delegations `delegate-run --queue` puts on a BullMQ queue (CLI-24, QUEUE-3). */
import { subcommandArguments } from './command-line.js';
import { resolve } from 'node:path';
import { ModelCatalog } from '../models/model-catalog.js';
import type { ModelChooser } from '../models/choose-model.js';
import { ReplayStandIn } from '../models/replay-stand-in.js';
import { UsageError } from '../protocol/errors.js';
import { createApprovalHook } from '../approvals/approval-policy.js';
import { DEFAULT_WORKER_CONCURRENCY, startQueueWorker, type QueueWorker } from '../queue/queue-worker.js';
import { connectionFor, DEFAULT_QUEUE_NAME } from '../queue/redis-url.js';
import { QUEUE_KEY_VARIABLE } from '../queue/queue-job.js';
import { parseCommandLine } from './command-line.js';
import { type CommandTelemetry, otelAlone, startTelemetry } from './telemetry-option.js';
import { isEntryPoint } from './entry.js';
import { EXIT, loadActivities, runtimeFor, tierModels, type CliIo, type ParsedArguments } from './run-setup.js';

/** The usage text `--help` prints and bad arguments repeat. */
export const WORKER_USAGE = `Usage: delegate-worker --queue <redis://host:port/db> [options]

Runs the delegations that delegate-run --queue puts on the queue, with the same runtime:
resolvers confined to --root, the same providers and Activities. Children of children are jobs again.

Options:
  --queue <redis://...>        the Redis the queue is on (required)
  --queue-name <name>          the queue's name (default ${DEFAULT_QUEUE_NAME})
  --concurrency <n>            jobs run at once (default ${DEFAULT_WORKER_CONCURRENCY})
  --activities <module>        ES module whose default export is { name: async (call, tool, context) => result } (repeatable)
  --root <dir>                 file delegates are confined to this folder (default: the current folder)
  --allow-host <host[:port]>   hosts URL delegates may be fetched from (repeatable)
  --trust-host <host[:port]>   URL delegates from this host may run local Activities (repeatable)
  --base-url <url>             an OpenAI-compatible server (also OPENAI_BASE_URL)
  --model <spec>               a model jobs may ask for, such as openai:gpt-4.1-mini or replay:<cassette> (repeatable)
  --tier <tier>=<spec>         the model of a tier (repeatable; also DELEGATE_MODELS); jobs may ask for it too
  --approve strict|approve_all how calls of tools with _approval "required" in the jobs are answered (default strict)
  --otel [endpoint]            send the jobs' spans to an OpenTelemetry collector (OTLP/HTTP, <endpoint>/v1/traces),
                               children of the delegating call's span; also on with OTEL_EXPORTER_OTLP_ENDPOINT
  --otel-content               put prompts, answers, inputs and outputs in the spans (they may hold secrets)
  --lock-seconds <n>           how long a job's lock lasts unrenewed before another worker takes it over (default 30);
                               a thread renews it while the job runs, even when an Activity blocks
  -h, --help                   this text
  --version                    print the package's version

Jobs are checked before they run: a job names its document by a path under --root or a URL, and
asks for a model, which must be one of --model or --tier. With DELEGATE_QUEUE_KEY set (the same on
every delegate-run --queue), only jobs signed with it run (spec/queue.md QUEUE-23, QUEUE-24).
`;

/** The command line of `delegate-worker`, parsed. */
export interface WorkerArguments {
  queue: string;
  queueName?: string;
  concurrency?: number;
  activities: string[];
  root?: string;
  allowHosts: string[];
  trustHosts: string[];
  baseUrl?: string;
  tiers: ReturnType<typeof tierModels>;
  /** `--model`: the models jobs may ask for, besides the `--tier` ones (QUEUE-23). */
  models: string[];
  lockMs?: number;
  approve: 'strict' | 'approve_all';
  /** `--otel [endpoint]`: `''` for the flag alone (TEL-1). */
  otel?: string;
  /** `--otel-content` (TEL-4). */
  otelContent?: boolean;
}

function positiveWhole(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) throw new UsageError(`${flag} expects a whole number of at least 1, got "${value}".`);
  return number;
}

/** Parses the command line; throws UsageError for anything malformed (CLI-24). */
export function parseWorkerArguments(argv: string[]): WorkerArguments | 'help' | 'version' {
  const { values, positionals } = parseCommandLine({
    args: otelAlone(argv),
    allowPositionals: true,
    options: {
      queue: { type: 'string' },
      otel: { type: 'string' },
      'otel-content': { type: 'boolean' },
      'queue-name': { type: 'string' },
      concurrency: { type: 'string' },
      activities: { type: 'string', multiple: true },
      root: { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
      'trust-host': { type: 'string', multiple: true },
      'base-url': { type: 'string' },
      tier: { type: 'string', multiple: true },
      model: { type: 'string', multiple: true },
      'lock-seconds': { type: 'string' },
      approve: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  if (positionals.length > 0) throw new UsageError(`delegate-worker takes no positional arguments, got: ${positionals.join(' ')}.`);
  if (values.queue === undefined) throw new UsageError('--queue <redis://host:port/db> is required: the Redis the queue is on.');
  connectionFor(values.queue);
  if (values.approve !== undefined && values.approve !== 'strict' && values.approve !== 'approve_all') {
    throw new UsageError(`--approve expects strict or approve_all (a worker has no one to ask), got "${values.approve}".`);
  }
  const lockSeconds = positiveWhole(values['lock-seconds'], '--lock-seconds');
  return {
    queue: values.queue,
    ...(values['queue-name'] === undefined ? {} : { queueName: values['queue-name'] }),
    ...(values.concurrency === undefined ? {} : { concurrency: positiveWhole(values.concurrency, '--concurrency') as number }),
    activities: values.activities ?? [],
    ...(values.root === undefined ? {} : { root: values.root }),
    allowHosts: values['allow-host'] ?? [],
    trustHosts: values['trust-host'] ?? [],
    ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
    tiers: tierModels(values.tier ?? []),
    models: values.model ?? [],
    ...(lockSeconds === undefined ? {} : { lockMs: lockSeconds * 1000 }),
    approve: values.approve === 'approve_all' ? 'approve_all' : 'strict',
    ...(values.otel === undefined ? {} : { otel: values.otel }),
    ...(values['otel-content'] ? { otelContent: true } : {}),
  };
}

/** The delegate-run command line a worker's runtime is set up from: the same flags mean the same (QUEUE-3). */
function runArguments(args: WorkerArguments): ParsedArguments {
  return {
    request: '',
    activities: args.activities,
    resumeChanged: false,
    json: false,
    allowHosts: args.allowHosts,
    trustHosts: args.trustHosts,
    tiers: args.tiers,
    quiet: true,
    ...(args.baseUrl === undefined ? {} : { baseUrl: args.baseUrl }),
  };
}

/**
 * The models of the worker's own command line (QUEUE-23): each `--model` and `--tier` spec, created
 * now (a cassette is read now, and a bad one is a usage error at start). Returns the chooser of a
 * job's model: the spec of the worker's model a job's spec names (by spec or by the model's id), or
 * a UsageError naming the ones there are. The `replay:` provider opens no cassette but these, so
 * a spec in a job, or in a document a job brings, never opens a file the worker did not name.
 */
function ownModels(args: WorkerArguments, models: ModelChooser, cwd: string): (spec: string) => string {
  const own = new Map<string, string>();
  const specs = [...args.models, ...Object.values(args.tiers)].filter((spec): spec is string => typeof spec === 'string');
  const replay = models.providers.get('replay');
  const cassettes = new Set(specs.filter((spec) => spec.startsWith('replay:')).map((spec) => resolve(cwd, spec.slice('replay:'.length))));
  if (replay) {
    models.providers.register('replay', (name, options) => {
      if (!cassettes.has(resolve(options.cwd, name)))
        throw new UsageError(`This worker opens no cassette but those its command line names (--model replay:<file>); "replay:${name}" is not one of them.`);
      return replay(name, options);
    });
  }
  for (const spec of specs) {
    own.set(spec, spec);
    // Only --model is created now: a --tier model may need a key only its own jobs use.
    if (args.models.includes(spec)) own.set(models.create(spec).id, spec);
  }
  return (spec) => {
    const found = own.get(spec);
    if (found !== undefined) return found;
    const listed = [...new Set(own.values())];
    throw new UsageError(
      `The job asks for the model "${spec}", which this worker was not given: it runs its jobs only on the models of its own command line (${listed.length === 0 ? 'none: give --model <spec>' : listed.join(', ')}).`,
      { available: listed },
    );
  };
}

/**
 * Starts the worker and runs until `io.signal` aborts (SIGINT, SIGTERM): then it stops taking jobs,
 * lets running ones finish, and resolves to the exit status (CLI-24).
 */
export async function workerMain(argv: string[], io: CliIo, started?: (worker: QueueWorker) => void): Promise<number> {
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const args = subcommandArguments(
    () => parseWorkerArguments(argv),
    WORKER_USAGE,
    io.stdout,
    (line) => say(`delegate-worker: ${line}`),
  );
  if (typeof args === 'number') return args;
  let worker: QueueWorker;
  let telemetry: CommandTelemetry | undefined;
  try {
    // Each job's spans go to the collector, under the delegating call's span (TEL-6, TEL-8).
    telemetry = await startTelemetry(args, io.env, 'delegate-worker', (line) => say(`delegate-worker: ${line}`));
    const root = resolve(io.cwd, args.root ?? '.');
    const activities = await loadActivities(args.activities, io.cwd);
    const catalog = ModelCatalog.load({ env: io.env, cwd: io.cwd });
    const runtime = runtimeFor(runArguments(args), io, { root, allowHosts: args.allowHosts, activities, catalog });
    const models = runtime.models as ModelChooser;
    const chosen = ownModels(args, models, io.cwd);
    const key = io.env[QUEUE_KEY_VARIABLE] || undefined;
    // Said once at start: without a key, the queue's Redis is the worker's door (QUEUE-24).
    if (key === undefined)
      say(
        `delegate-worker: ${QUEUE_KEY_VARIABLE} is not set, so jobs are not signed: anyone who can write to ${args.queue} can have this worker run the documents under its --root and its hosts, with inputs of their choosing, on its models (spec/queue.md QUEUE-24).`,
      );
    worker = await startQueueWorker({
      url: args.queue,
      ...(args.queueName === undefined ? {} : { queueName: args.queueName }),
      ...(args.concurrency === undefined ? {} : { concurrency: args.concurrency }),
      ...(args.lockMs === undefined ? {} : { lockMs: args.lockMs }),
      runtime,
      confirm: createApprovalHook({ mode: args.approve }),
      model: (spec, standsFor) => ReplayStandIn.of(models.create(chosen(spec)), standsFor),
      resolvers: runtime.resolvers,
      root,
      ...(key === undefined ? {} : { key }),
      onRefused: (job, error) => say(`delegate-worker: refused job ${job}: ${error.message}`),
      say: (line) => say(`delegate-worker: ${line}`),
      ...(telemetry ? { traceTo: telemetry.attach } : {}),
    });
  } catch (error) {
    await telemetry?.close();
    say(`delegate-worker: ${(error as Error).message}`);
    return error instanceof UsageError ? EXIT.usage : EXIT.failed;
  }
  say(`delegate-worker ${worker.id}: taking jobs from ${args.queueName ?? DEFAULT_QUEUE_NAME} on ${args.queue}`);
  started?.(worker);
  if (!io.signal?.aborted) await new Promise((stop) => io.signal?.addEventListener('abort', stop, { once: true }));
  await worker.close();
  await telemetry?.close();
  return EXIT.ok;
}

if (isEntryPoint(import.meta.url)) {
  const controller = new AbortController();
  for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => controller.abort());
  workerMain(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: controller.signal }).then(
    (status) => process.exit(status),
    (error: unknown) => {
      process.stderr.write(`delegate-worker: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(EXIT.failed);
    },
  );
}
