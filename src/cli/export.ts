/** `delegate-run export <trace.jsonl>`: a finished trace or journal sent to an OpenTelemetry collector as spans (spec/telemetry.md TEL-10). */
import { resolve } from 'node:path';
import { ProtocolError } from '../protocol/errors.js';
import { onePositional, parseCommandLine, subcommandArguments } from './command-line.js';
import { readTraceFile } from './report/read-trace.js';
import type { ReportIo } from './report/report.js';
import { otelAlone } from './telemetry-option.js';

/** The usage text of the subcommand. */
export const EXPORT_USAGE = `Usage: delegate-run export <trace.jsonl> [options]

Sends a finished trace (--trace) or journal (--journal) to an OpenTelemetry collector over OTLP/HTTP,
as the same spans a run with --otel sends while it runs: invoke_agent, chat and execute_tool spans
with the GenAI semantic conventions' attributes. A trace that recorded its trace id (run.started
traceId) is sent under that id. Prints how many spans were sent and the trace ids on stdout.

Options:
  --otel <endpoint>   the collector's OTLP/HTTP endpoint; spans go to <endpoint>/v1/traces
                      (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)
  --otel-content      send the prompts, answers, inputs and outputs too (they may hold secrets)
  -h, --help          this text
  --version           print the package's version
`;

interface ExportArguments {
  trace: string;
  otel: string;
  otelContent: boolean;
}

function parseExportArguments(argv: string[]): ExportArguments | 'help' | 'version' {
  const { values, positionals } = parseCommandLine({
    args: otelAlone(argv),
    allowPositionals: true,
    options: { otel: { type: 'string' }, 'otel-content': { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  const trace = onePositional(positionals, 'Expected a trace or journal file (.jsonl) to export.', 'trace file');
  return { trace, otel: values.otel ?? '', otelContent: values['otel-content'] ?? false };
}

/**
 * Runs `delegate-run export` with the arguments after `export`; resolves to the exit status: 0 with
 * every span taken by the collector, 1 when the collector could not take them, 2 for bad usage or a
 * trace that cannot be read (CLI-33).
 */
export async function exportMain(argv: string[], io: ReportIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`delegate-run export: ${line}\n`);
  const args = subcommandArguments(() => parseExportArguments(argv), EXPORT_USAGE, io.stdout, say);
  if (typeof args === 'number') return args;
  const { otlpSettings } = await import('../telemetry/otlp-export.js');
  const { exportEvents } = await import('../telemetry/export-trace.js');
  try {
    const settings = otlpSettings({ otel: args.otel, otelContent: args.otelContent }, io.env, 'delegate-run');
    if (!settings) return 2;
    const sent = await exportEvents(readTraceFile(resolve(io.cwd, args.trace)), settings, say);
    if (sent.failed) return 1;
    io.stdout.write(`Sent ${sent.spans} span${sent.spans === 1 ? '' : 's'} to ${settings.url}: trace ${sent.traceIds.join(', ') || '(none)'}.\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    say(error.message);
    return 2;
  }
}
