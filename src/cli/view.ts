/** `delegate-run view <trace.jsonl>`: the trace as one self-contained HTML page (spec/cli.md CLI-20, spec/viewer.md). */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ProtocolError, UsageError } from '../protocol/errors.js';
import { renderPage } from '../viewer/render-page.js';
import { onePositional, parseCommandLine, subcommandArguments } from './command-line.js';
import { openFile } from './open-file.js';
import { type BadTraceLine, readTraceFile } from './report/read-trace.js';
import { type ReportIo, subcommandCatalog } from './report/report.js';
import { TraceView } from './trace-view.js';

/** Bad usage, an unreadable trace, a page that cannot be written (CLI-5). */
const USAGE_EXIT = 2;
/** Stopped by a signal before the page was written (CLI-5, CLI-13). */
const CANCELLED_EXIT = 130;

/** The usage text of the subcommand. */
export const VIEW_USAGE = `Usage: delegate-run view <trace.jsonl> [options]

Writes the trace as one self-contained HTML page (no network requests): the delegation tree, a
timeline of runs, model calls and calls, the cost per model and tier, what each model was sent and
answered, and the approvals. Prints the page's path on stdout.

Options:
  --out <file.html>   where to write the page (default: the trace's path with .html for .jsonl)
  --open              then open it with the system's opener (xdg-open, open or start), when there is one
  -h, --help          this text
  --version           print the package's version
`;

interface ViewArguments {
  trace: string;
  out?: string;
  open: boolean;
}

function parseViewArguments(argv: string[]): ViewArguments | 'help' | 'version' {
  const { values, positionals } = parseCommandLine({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' }, open: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  const trace = onePositional(positionals, 'Expected a trace file (.jsonl) to view.', 'trace file');
  return { trace, open: values.open ?? false, ...(values.out === undefined ? {} : { out: values.out }) };
}

/** The page's default path: the trace's, `.jsonl` (or any extension) replaced by `.html`. */
export function defaultPagePath(trace: string): string {
  return /\.[^./\\]+$/.test(trace) ? trace.replace(/\.[^./\\]+$/, '.html') : `${trace}.html`;
}

/**
 * Runs `delegate-run view` with the arguments after `view`; resolves to the exit status: 0 with
 * the page written and its path printed (lines that are not events are skipped and named, on
 * stderr and on the page), 2 for bad usage, a trace that cannot be read or a page that cannot be
 * written, 130 when `io.signal` stops it first.
 */
export async function viewMain(argv: string[], io: ReportIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`delegate-run view: ${line}\n`);
  const args = subcommandArguments(() => parseViewArguments(argv), VIEW_USAGE, io.stdout, say);
  if (typeof args === 'number') return args;
  const trace = resolve(io.cwd, args.trace);
  const out = resolve(io.cwd, args.out ?? defaultPagePath(args.trace));
  const badLines: BadTraceLine[] = [];
  let view: TraceView;
  try {
    if (out === trace) throw new UsageError(`--out ${args.out} is the trace itself; choose another file for the page.`);
    const catalog = subcommandCatalog(io, say);
    view = new TraceView({ tierOf: (model) => catalog.tierOf(model) });
    for await (const event of readTraceFile(trace, { onBadLine: (bad) => badLines.push(bad) })) {
      if (io.signal?.aborted) {
        say('cancelled before the page was written.');
        return CANCELLED_EXIT;
      }
      view.apply(event);
    }
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    say(error.message);
    return USAGE_EXIT;
  }
  const data = view.view(args.trace, badLines);
  try {
    writeFileSync(out, renderPage(data));
  } catch (error) {
    say(`Cannot write the page ${out}: ${(error as Error).message}`);
    return USAGE_EXIT;
  }
  for (const bad of badLines.slice(0, 5)) say(`skipped ${bad.message}`);
  if (badLines.length > 5) say(`skipped ${badLines.length - 5} more lines that are not trace events.`);
  const running = data.runs.filter((run) => run.status === 'running').length;
  if (running > 0) say(`${running === 1 ? 'a run has' : `${running} runs have`} not ended in the trace yet: shown as running.`);
  io.stdout.write(`${out}\n`);
  if (args.open) {
    const opener = await openFile(out, io.env);
    if (opener === undefined) say(`no system opener (xdg-open, open or start) was found; open ${out} in a browser.`);
  }
  return 0;
}
