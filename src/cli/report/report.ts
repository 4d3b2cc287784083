/** `delegate-run report <trace.jsonl>`: where a run tree's dollars went, from its trace's model answers, priced again with the model catalog (spec/cli.md CLI-17). */
import { resolve } from 'node:path';
import { ModelCatalog } from '../../models/model-catalog.js';
import { ProtocolError, UsageError } from '../../protocol/errors.js';
import { onePositional, parseCommandLine, subcommandArguments } from '../command-line.js';
import { formatGroupTable, formatRunTable } from './cost-table.js';
import { type CostReport, REPORT_GROUPINGS, type ReportGrouping, costReport, reportJson } from './cost-report.js';
import { CostTree, answerModel } from './cost-tree.js';
import { readTraceFile } from './read-trace.js';

/** Where the report reads and writes (the CLI's own streams fit). */
export interface ReportIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Stops reading the trace: the report then prints nothing and resolves to 130 (CLI-13). */
  signal?: AbortSignal;
}

/**
 * The model catalog a subcommand prices or lists with: the shipped models.json, then `userFile`
 * (`--models`) or DELEGATE_MODELS on top, each warning said through `say`. Throws a UsageError for
 * a models file that is not valid.
 */
export function subcommandCatalog(io: Pick<ReportIo, 'env' | 'cwd'>, say: (line: string) => void, userFile?: string): ModelCatalog {
  return ModelCatalog.load({ env: io.env, cwd: io.cwd, warn: (message) => say(`warning: ${message}`), ...(userFile === undefined ? {} : { userFile }) });
}

/** Bad usage, an unreadable trace or models file (CLI-5). */
const USAGE_EXIT = 2;
/** Stopped by a signal before the report was printed (CLI-5, CLI-13). */
const CANCELLED_EXIT = 130;

/** The usage text of the subcommand. */
export const REPORT_USAGE = `Usage: delegate-run report <trace.jsonl> [options]

Where the dollars of a run tree went, computed from the model answers in its trace and priced
with the model catalog (the shipped models.json, then DELEGATE_MODELS or --models).

Options:
  --by run|model|tier|parent   one row per run with subtotals per parent (default), or rows grouped
                               by the model answers were priced as, by tier, or per parent's subtree
  --json                       print {"rows":[…],"total":{…}} on stdout and nothing else there
  --models <models.json>       price with this file merged over the shipped models.json (instead of DELEGATE_MODELS)
  -h, --help                   this text
  --version                    print the package's version
`;

interface ReportArguments {
  trace: string;
  by: ReportGrouping;
  json: boolean;
  models?: string;
}

function parseReportArguments(argv: string[]): ReportArguments | 'help' | 'version' {
  const { values, positionals } = parse(argv);
  if (values.help) return 'help';
  if (values.version) return 'version';
  const trace = onePositional(positionals, 'Expected a trace file (.jsonl) to report on.', 'trace file');
  const by = values.by ?? 'run';
  if (!(REPORT_GROUPINGS as readonly string[]).includes(by)) throw new UsageError(`--by expects one of ${REPORT_GROUPINGS.join(', ')}, got "${by}".`);
  return {
    trace,
    by: by as ReportGrouping,
    json: values.json ?? false,
    ...(values.models === undefined ? {} : { models: values.models }),
  };
}

function parse(argv: string[]) {
  return parseCommandLine({
    args: argv,
    allowPositionals: true,
    options: {
      by: { type: 'string' },
      json: { type: 'boolean' },
      models: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
}

/**
 * Runs `delegate-run report` with the arguments after `report`; resolves to the exit status: 0
 * with the report printed (a truncated trace included, said on stderr), 2 for bad usage, a trace
 * that cannot be read or is not a trace, or a models file that is not valid, 130 when `io.signal`
 * stops it first (the executable then exits with the signal's own status, CLI-13).
 */
export async function reportMain(argv: string[], io: ReportIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`delegate-run report: ${line}\n`);
  const args = subcommandArguments(() => parseReportArguments(argv), REPORT_USAGE, io.stdout, say);
  if (typeof args === 'number') return args;
  const path = resolve(io.cwd, args.trace);
  let lines: string;
  let report: CostReport;
  try {
    // The catalog first: a models file that is not valid is said before a long trace is read.
    const catalog = subcommandCatalog(io, say, args.models);
    const tree = new CostTree();
    for await (const event of readTraceFile(path)) {
      // Reading yields to the event loop between chunks, so a signal stops a long report here.
      if (io.signal?.aborted) {
        say('cancelled before the report was printed.');
        return CANCELLED_EXIT;
      }
      tree.apply(event);
    }
    // What an A2A agent reported is priced as it reported it: no catalog knows its models (DEL-37).
    report = costReport(tree, {
      price: (answer) => (answer.remote ? answer.costUsd : catalog.costOf(answerModel(answer), answer.usage)),
      tierOf: (model) => catalog.tierOf(model),
    });
    lines = args.json
      ? JSON.stringify(reportJson(report, args.by))
      : (args.by === 'run' ? formatRunTable(report) : formatGroupTable(report, args.by)).join('\n');
  } catch (error) {
    // A trace that cannot be read or is not a trace, a models file that is not valid: said in one line.
    if (!(error instanceof ProtocolError)) throw error;
    say(error.message);
    return USAGE_EXIT;
  }
  io.stdout.write(`${lines}\n`);
  if (report.runs.length === 0) say(`${path} holds no runs: an empty trace (a run that never started, TRACE-2).`);
  if (report.unfinished.length > 0) {
    const named = report.unfinished.map((run) => `${run.name} (${run.run})`);
    const listed = named.length > 5 ? `${named.slice(0, 5).join(', ')} and ${named.length - 5} more` : named.join(', ');
    say(
      `${path} is truncated: ${named.length === 1 ? 'a run has' : `${named.length} runs have`} no run.completed or run.failed (${listed}); the report counts the answers the trace holds.`,
    );
  }
  return 0;
}
