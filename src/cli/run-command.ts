/** The `delegate-run` command: its usage, subcommands and runs, loaded by the executable (run.ts) once it has more to do than print its version (CLI-34). */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createApprovalHook, type ApprovalMode } from '../approvals/approval-policy.js';
import { openJournalFile } from '../files/journal-file.js';
import type { ModelChooser } from '../models/choose-model.js';
import { ModelCatalog } from '../models/model-catalog.js';
import type { RunResult } from '../protocol/contracts.js';
import { UsageError } from '../protocol/errors.js';
import { journalSession, journalStart, type JournalStore } from '../protocol/trace/journal.js';
import { Tracer } from '../protocol/trace/trace.js';
import { startTelemetry } from './telemetry-option.js';
import { SchemaFormNotices } from './schema-form-notices.js';
import { isHttpUrl } from '../resolvers/reference-forms.js';
import { terminalPrompt } from './approval-prompt.js';
import { isUnknownName, packageVersion, unknownName } from './command-line.js';
import { EXAMPLES_FLAG, exampleArguments, examplesText } from './examples.js';
import { journalSettings, resumedArguments } from './journal-arguments.js';
import { checkMissingPieces } from './missing-pieces.js';
import { createProgress, type Progress } from './progress/progress.js';
import {
  type CliIo,
  chooseModel,
  EXIT,
  loadActivities,
  loadEntry,
  openCheckedTrace,
  type ParsedArguments,
  parseArguments,
  queueOptions,
  queuedTop,
  resumeOptionsFor,
  runOptionsFor,
  runtimeFor,
} from './run-setup.js';
import { NO_MODEL, replayedSentence, reportResult, reportSetupError } from './run-outcome.js';
import { RunSession } from './run-session.js';
import { TreeCosts } from './report/tree-costs.js';

const USAGE = `Usage: delegate-run <request.json | http(s)://host/path.json> [options]
       delegate-run report <trace.jsonl> [--by run|model|tier|parent] [--json] [--models <models.json>]
         (where the dollars went; a request file named "report" runs as ./report)
       delegate-run view <trace.jsonl> [--out <file.html>] [--open]
         (the trace as one self-contained HTML page; a request file named "view" runs as ./view)
       delegate-run models [--json] [--models <models.json>]
         (the models known: tier, context window, price and where the price comes from)
       delegate-run export <trace.jsonl> [--otel <endpoint>] [--otel-content]
         (a finished trace sent to an OpenTelemetry collector as spans)
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
  --journal <file.jsonl>       write the trace durably, every event on disk before its effect, to resume from
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
  --allow-host <host[:port]>   hosts URL delegates may be fetched from and A2A agents called on (repeatable)
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
  --queue-heartbeat <seconds>  how long the tree outlives this process on the workers if it is killed (default 30)
  --queue-keep <seconds>       how long finished jobs are kept on the queue (default 3600, at most 86400)
  --otel [endpoint]            send spans to an OpenTelemetry collector over OTLP/HTTP, <endpoint>/v1/traces
                               (default endpoint: OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318);
                               also on when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set
  --otel-content               put prompts, answers, inputs and outputs in the spans (they may hold secrets)
  --quiet                      no progress on stderr
  -h, --help                   this text (delegate-run report -h, view -h, models -h, export -h: theirs)
  --version                    print the package's version
`;

/** The subcommand `delegate-run report …` (CLI-17). */
const REPORT_COMMAND = 'report';
/** The subcommand `delegate-run view …` (CLI-20). */
const VIEW_COMMAND = 'view';
/** The subcommand `delegate-run models …` (CLI-32). */
const MODELS_COMMAND = 'models';
/** The subcommand `delegate-run export …` (CLI-33). */
const EXPORT_COMMAND = 'export';
/** The subcommands of `delegate-run` (CLI-17, CLI-20, CLI-32, CLI-33). */
const SUBCOMMANDS = [REPORT_COMMAND, VIEW_COMMAND, MODELS_COMMAND, EXPORT_COMMAND];

/**
 * Refuses a first argument that reads as a mistyped subcommand (CLI-29): a bare word (no path
 * separator, dot or colon, not an option) that names no file and is near a subcommand's name.
 */
function checkSubcommand(first: string | undefined, cwd: string): void {
  if (first === undefined || !/^[A-Za-z][\w-]*$/.test(first) || existsSync(resolve(cwd, first))) return;
  const error = unknownName('subcommand', first, SUBCOMMANDS);
  if (error.data.nearest !== undefined) throw error;
}

/** Runs the command line; resolves to the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  // A subcommand is its exact name as the first argument (CLI-17); a file of that name is `./report`.
  // Each is loaded only when asked for: a run loads neither the report nor the viewer (CLI-34).
  if (argv[0] === REPORT_COMMAND) return (await import('./report/report.js')).reportMain(argv.slice(1), io);
  if (argv[0] === VIEW_COMMAND) return (await import('./view.js')).viewMain(argv.slice(1), io);
  if (argv[0] === MODELS_COMMAND) return (await import('./models.js')).modelsMain(argv.slice(1), io);
  if (argv[0] === EXPORT_COMMAND) return (await import('./export.js')).exportMain(argv.slice(1), io);
  // The shipped examples (CLI-31): `--examples` lists them, `--example <name>` stands for the command line that runs one.
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
  let args = commandLine(argv, io, say);
  if (typeof args === 'number') return args;
  let resumed: Resumed | undefined;
  if (args.resume !== undefined) {
    try {
      resumed = openResumed(args, io.cwd);
    } catch (error) {
      return reportSetupError(error, args.json, io, say);
    }
    args = resumed.args;
  }
  return runCommand(args, resumed, io, say);
}

/** The command line parsed, or the exit status once `--help`, `--version` or bad usage has been answered (CLI-29). */
function commandLine(argv: string[], io: CliIo, say: (line: string) => void): ParsedArguments | number {
  let args: ParsedArguments | 'help' | 'version';
  try {
    checkSubcommand(argv[0], io.cwd);
    args = parseArguments(argv, io.cwd);
  } catch (error) {
    // --json promises one result object on stdout, even when the command line itself is wrong.
    if (argv.includes('--json'))
      io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'usage_error', message: (error as Error).message }, run: null })}\n`);
    // An unknown name is one line, with the nearest valid one (CLI-29); other bad usage shows the usage.
    say(`delegate-run: ${(error as Error).message}${isUnknownName(error) ? '' : `\n\n${USAGE}`}`);
    return EXIT.usage;
  }
  if (args === 'help') {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (args === 'version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  return args;
}

/** What one run of the command is watched by: its tracer, progress view, open resources, and where the catalog goes once loaded. */
interface RunWatch {
  tracer: Tracer;
  progress: Progress;
  session: RunSession;
  models: { catalog?: ModelCatalog };
  say: (line: string) => void;
}

/** Runs (or resumes) the Request the command line names, then closes what it opened and reports (CLI-4, CLI-5). */
async function runCommand(args: ParsedArguments, resumed: Resumed | undefined, io: CliIo, say: (line: string) => void): Promise<number> {
  const tracer = new Tracer();
  // Loaded once, by `startRun`: it prices the answers, chooses the models and names the summary's tiers.
  const models: { catalog?: ModelCatalog } = {};
  // The figures of the whole tree, a resume's included the journal's earlier work (JOURNAL-12): the summary's and --json's.
  const costs = new TreeCosts(resumed?.store.events);
  costs.follow(tracer);
  const progress = createProgress(tracer, io.stderr, { env: io.env, quiet: args.quiet, tierOf: (model) => models.catalog?.tierOf(model), costs });
  // Said through the progress view, so a live tree on screen stays intact.
  io.signal?.addEventListener('abort', () => progress.log('Cancelling… (press Ctrl-C again to quit at once)'), { once: true });
  const session = new RunSession(resumed?.store);
  const replayed = countReplayed(tracer);
  let outcome: { result: RunResult } | { error: unknown };
  // The model calls sent weaker than strict, for --json's `schemaForms` (MODEL-17).
  const schemaForms = new SchemaFormNotices();
  tracer.subscribe((event) => schemaForms.take(event));
  try {
    outcome = { result: await startRun(args, resumed, io, { tracer, progress, session, models, say }) };
  } catch (error) {
    progress.finish();
    // A run that never started still leaves its trace, empty (TRACE-2), unless the path is refused.
    if (!session.sink && args.trace !== undefined) {
      try {
        session.sink = openCheckedTrace(args, io.cwd);
      } catch {
        // The error that stopped the run is the one to report.
      }
    }
    outcome = { error };
  }
  await session.close();
  if ('error' in outcome) return reportSetupError(outcome.error, args.json, io, say);
  progress.finish(outcome.result);
  // A resume says what it took from the journal instead of paying for it again (CLI-23).
  if (resumed && !args.quiet && !args.json) say(replayedSentence(resumed.path, replayed));
  const written = {
    sink: session.sink,
    journal: session.journal,
    runs: costs.report().total.runs,
    ...(resumed ? { replayed } : {}),
    schemaForms: schemaForms.all,
  };
  return reportResult(outcome.result, args, io, written, say);
}

/** Sets up the runtime, the queue, the model and the trace, and runs or resumes the Request; what it opens goes into the session. */
async function startRun(args: ParsedArguments, resumed: Resumed | undefined, io: CliIo, watch: RunWatch): Promise<RunResult> {
  const { tracer, progress, session, say } = watch;
  // Spans to a collector when --otel or the standard variables say so (TEL-1); OpenTelemetry loads only then.
  session.telemetry = await startTelemetry(args, io.env, 'delegate-run', say);
  session.telemetry?.attach(tracer);
  const requestPath = isHttpUrl(args.request) ? args.request : resolve(io.cwd, args.request);
  const root = args.root ? resolve(io.cwd, args.root) : isHttpUrl(args.request) ? io.cwd : dirname(requestPath);
  const allowHosts = [...args.allowHosts];
  if (isHttpUrl(args.request)) allowHosts.push(new URL(args.request).host);
  const activities = await loadActivities(args.activities, io.cwd);
  const confirm = approvalHook(args.approve, io, progress);
  // The catalog honours DELEGATE_MODELS of the command's own environment and folder (DEL-28).
  const catalog = ModelCatalog.load({ env: io.env, cwd: io.cwd });
  watch.models.catalog = catalog;
  const runtime = runtimeFor(args, io, { root, allowHosts, activities, catalog });
  session.runtime = runtime;
  // An Activity whose promise nothing left in the process can settle fails its call and run (CLI-27, ERR-8).
  const pending = runtime.pendingActivities;
  session.stopIdle = io.onIdle?.(() => pending.failStalled().length > 0);
  // Every delegation becomes a job for delegate-worker processes (CLI-24, QUEUE-1); Redis is reached now or never.
  // Loaded only then: BullMQ and its Redis client cost every other run nothing.
  const queue =
    args.queue === undefined ? undefined : await (await import('../queue/queue-child-runner.js')).QueueChildRunner.connect(queueOptions(args, io.env, say));
  session.queue = queue;
  runtime.useChildRunner(queue);
  const loaded = await loadEntry(runtime, requestPath);
  const resumedTree = resumed ? { run: resumed.run, session: journalSession(resumed.store.events) } : undefined;
  const { model, runId } = queuedTop(queue, chooseModel(args, loaded.loaded, runtime.models as ModelChooser, io, say), resumedTree);
  // An Activity no module registers, a delegate with no model to run on: named now, before anything runs (CLI-30).
  // With --queue the delegates run on the workers, with their own --activities and --model: only the top document is this process's to check.
  if (!resumed) await checkMissingPieces(runtime, loaded.loaded, { hasModel: model !== undefined, noModel: NO_MODEL, delegatesHere: queue === undefined });
  // The run's inputs have loaded: only now may the trace replace a file, and never one of them (CLI-15).
  session.sink = openCheckedTrace(args, io.cwd, model);
  if (session.sink) tracer.subscribe(session.sink);
  if (resumed) {
    return runtime.resume(resumed.store, { ...resumeOptionsFor(args, io), ...(model ? { model } : {}), request: loaded.loaded, tracer, confirm });
  }
  const journal = args.journal === undefined ? undefined : openJournalFile(resolve(io.cwd, args.journal), 'create');
  session.journal = journal;
  const journaled = journal ? { journal, journalSettings: { ...journalSettings(args, io.cwd, root) } } : {};
  return runtime.run(loaded.loaded, {
    ...runOptionsFor(args, io),
    ...(model ? { model } : {}),
    tracer,
    confirm,
    trusted: loaded.trusted,
    ...(runId === undefined ? {} : { runId }),
    ...journaled,
  });
}

/** A journal `--resume` opened: its store, the command line it recorded, its path and its top run. */
type Resumed = ReturnType<typeof openResumed>;

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

/** The approval policy: --approve, else interactive when a person is at a terminal, else strict. */
function approvalHook(mode: ApprovalMode | undefined, io: CliIo, progress: Progress) {
  const terminal = Boolean(io.stdin?.isTTY) && Boolean((io.stderr as { isTTY?: boolean }).isTTY);
  const chosen = mode ?? (terminal ? 'interactive' : 'strict');
  if (chosen !== 'interactive') return createApprovalHook({ mode: chosen });
  if (!io.stdin?.isTTY) throw new UsageError('--approve interactive needs a terminal to ask at; use approve_all or strict when input is not a terminal.');
  return createApprovalHook({ mode: 'interactive', prompt: terminalPrompt({ input: io.stdin, output: io.stderr, aside: (work) => progress.aside(work) }) });
}
