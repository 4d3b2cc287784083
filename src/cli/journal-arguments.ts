/** `--journal` and `--resume` (spec/cli.md CLI-22, CLI-23): the flags a journal records, and the command line a resume runs with. */
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../protocol/errors.js';
import type { JournalStart } from '../protocol/trace/journal.js';

/** The flags a journal records to start its run the same way again (JOURNAL-3), paths made absolute. */
export interface JournalSettings {
  model?: string;
  baseUrl?: string;
  activities: string[];
  allowHosts: string[];
  trustHosts: string[];
  root: string;
  workersDir?: string;
  tiers: Record<string, string>;
}

/** What of the parsed command line {@link journalSettings} and {@link resumedArguments} read and write. */
export interface JournalArguments {
  request: string;
  input?: unknown;
  model?: string;
  baseUrl?: string;
  activities: string[];
  resolve?: 'runtime' | 'upfront';
  maxDepth?: number;
  allowHosts: string[];
  trustHosts: string[];
  root?: string;
  workersDir?: string;
  record?: string;
  tiers: Record<string, string>;
  journal?: string;
}

/**
 * The flags a resume takes from the journal, which may not be given again (CLI-23): they choose
 * what the run does, and the journal's answers were given to the run they chose.
 */
const FROM_THE_JOURNAL: readonly [keyof JournalArguments, string][] = [
  ['input', '--input'],
  ['model', '--model'],
  ['activities', '--activities'],
  ['resolve', '--resolve'],
  ['maxDepth', '--max-depth'],
  ['allowHosts', '--allow-host'],
  ['trustHosts', '--trust-host'],
  ['root', '--root'],
  ['workersDir', '--workers-dir'],
  ['tiers', '--tier'],
  ['record', '--record'],
  ['journal', '--journal'],
];

/** The settings a journal records for this command line; `root` is the folder the run was confined to. */
export function journalSettings(args: JournalArguments, cwd: string, root: string): JournalSettings {
  return {
    ...(args.model === undefined ? {} : { model: absoluteReplay(args.model, cwd) }),
    ...(args.baseUrl === undefined ? {} : { baseUrl: args.baseUrl }),
    activities: args.activities.map((module) => resolve(cwd, module)),
    allowHosts: args.allowHosts,
    trustHosts: args.trustHosts,
    root,
    ...(args.workersDir === undefined ? {} : { workersDir: args.workersDir }),
    tiers: Object.fromEntries(Object.entries(args.tiers).map(([tier, spec]) => [tier, absoluteReplay(spec, cwd)])),
  };
}

/** A `replay:` spec with its cassette path made absolute, so a resume from another folder finds it. */
function absoluteReplay(spec: string, cwd: string): string {
  if (!spec.startsWith('replay:')) return spec;
  const path = spec.slice('replay:'.length);
  return isAbsolute(path) ? spec : `replay:${resolve(cwd, path)}`;
}

/**
 * The command line of a resume: the journal's request, input and recorded flags, with the flags
 * given again that may change (limits, approvals, output, `--base-url`). A request or a flag the
 * journal decides, given again, is a UsageError naming it.
 */
export function resumedArguments<A extends JournalArguments>(args: A, positionals: readonly string[], start: JournalStart, journal: string): A {
  if (positionals.length > 0) {
    throw new UsageError(`--resume ${journal} runs the journal's request (${start.request}); give no request with it, got ${positionals.join(' ')}.`);
  }
  for (const [field, flag] of FROM_THE_JOURNAL) {
    const value = args[field];
    if (value === undefined || (Array.isArray(value) && value.length === 0) || (field === 'tiers' && Object.keys(value as object).length === 0)) continue;
    throw new UsageError(`${flag} cannot be given with --resume: the run goes on as the journal ${journal} recorded it.`);
  }
  const settings = start.settings as Partial<JournalSettings>;
  return {
    ...args,
    request: start.request,
    ...(start.input === undefined ? {} : { input: start.input }),
    ...(settings.model === undefined ? {} : { model: settings.model }),
    ...(args.baseUrl === undefined && settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
    activities: settings.activities ?? [],
    allowHosts: settings.allowHosts ?? [],
    trustHosts: settings.trustHosts ?? [],
    ...(settings.root === undefined ? {} : { root: settings.root }),
    ...(settings.workersDir === undefined ? {} : { workersDir: settings.workersDir }),
    tiers: settings.tiers ?? {},
  };
}
