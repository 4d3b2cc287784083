/** How `delegate-run` reports what its run came to: the result or error it prints, and the exit status (CLI-4, CLI-5). */
import { resolve } from 'node:path';
import type { JsonlFileSink } from '../files/jsonl-file-sink.js';
import type { RunResult } from '../protocol/contracts.js';
import { ProtocolError, UsageError } from '../protocol/errors.js';
import { notJsonPlaceholder, toJsonData } from '../protocol/json-data.js';
import type { JournalStore } from '../protocol/trace/journal.js';
import { jsonUsage } from './report/cost-report.js';
import { type CliIo, EXIT, type ParsedArguments } from './run-setup.js';
import type { SchemaFormNotice } from './schema-form-notices.js';

/** What a run that needed a model and had none says (CLI-3). */
export const NO_MODEL = `No model was chosen. Choose one of:
  1. --model openai:<model> | anthropic:<model> | replay:<cassette.json>
  2. set OPENAI_API_KEY or ANTHROPIC_API_KEY
  3. put a cassette beside the request, named <request>.cassette.json`;

/** What the command wrote beside its result: the trace, the journal, and what a resume replayed. */
export interface Written {
  sink: JsonlFileSink | undefined;
  journal: JournalStore | undefined;
  replayed?: { modelCalls: number; calls: number };
  /** Runs in the tree, as the summary and `delegate-run report` count them (CLI-4). */
  runs: number;
  /** The model calls sent in a weaker form than strict, once per run, model and form (MODEL-17). */
  schemaForms?: SchemaFormNotice[];
}

/** Prints a finished run's result (CLI-4) and says its exit status; a trace or journal that failed to write fails the command (TRACE-14, CLI-22). */
export function reportResult(result: RunResult, args: ParsedArguments, io: CliIo, written: Written, say: (line: string) => void): number {
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
    ...(written.schemaForms?.length ? { schemaForms: written.schemaForms } : {}),
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

/** The exit status of a run's typed error (CLI-5). */
function exitFor(error: ProtocolError): number {
  if (error.code === 'cancelled_by_user') return EXIT.cancelled;
  if (error.code === 'usage_error' || error.code === 'invalid_request') return EXIT.usage;
  return EXIT.failed;
}

/** Reports an error that stopped the command before its run started, on stdout as --json's object or on stderr, and says its exit status (CLI-5). */
export function reportSetupError(error: unknown, json: boolean, io: CliIo, say: (line: string) => void): number {
  const protocolError = error instanceof ProtocolError ? error : new UsageError(error instanceof Error ? error.message : String(error));
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: protocolError.toJSON(), run: null })}\n`);
  else say(`delegate-run: ${protocolError.message}`);
  // Nothing ran yet: a bad request, reference, model choice or activities module is a usage problem.
  return protocolError.code === 'cancelled_by_user' ? EXIT.cancelled : EXIT.usage;
}

/** What a resume says it took from its journal instead of paying for it again (CLI-23). */
export function replayedSentence(path: string, replayed: { modelCalls: number; calls: number }): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  return `Resumed from ${path}: ${plural(replayed.modelCalls, 'model call')} replayed from the journal (paid once, counted in the cost), ${plural(replayed.calls, 'finished call')} not run again.`;
}
