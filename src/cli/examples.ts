/** The examples shipped in the package, runnable by name offline: `delegate-run --example <name>` and `--examples` (CLI-31). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../protocol/errors.js';

/** The package's root folder, which holds `requests/` and `examples/` (package.json `files`). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One runnable example: its Request (relative to the package root), what it shows, and the options it runs with. */
interface Example {
  request: string;
  summary: string;
  /** The input: JSON text, or `@` and a file relative to the package root. */
  input?: string;
  /** An Activities module relative to the package root. */
  activities?: string;
}

/**
 * The examples, by name. Each replays the cassette beside its Request, whose answers fit the input
 * given here. `requests/pitch-deck` is not among them: it writes into its own folder, which an
 * installed package should not have written to. Nor is `requests/a2a`: its delegate is an A2A agent
 * that `delegate-serve --a2a` must be serving first (docs/06-serving-and-mcp.md runs it).
 */
const EXAMPLES: Readonly<Record<string, Example>> = {
  music: {
    request: 'requests/music/producer.json',
    summary: 'a producer delegates a song and an ambience, in parallel',
    input: '@examples/music-input.json',
  },
  plan: { request: 'requests/plan/welcome.json', summary: 'a plan that needs no model at all', input: '{"name":"Ada"}' },
  weather: {
    request: 'requests/weather/forecast.json',
    summary: 'a latent tool and an Activity',
    input: '{"city":"Lisbon","activity":"cycling"}',
    activities: 'requests/weather/activities.mjs',
  },
  translator: { request: 'requests/translator/localize.json', summary: 'two instances of one delegate', input: '{"text":"Pin files to your workspace."}' },
  refund: {
    request: 'requests/refund/support.json',
    summary: 'a recorded call is never run twice',
    input: '{"request":"A refund, please.","customerId":"cust_123","amount":50}',
    activities: 'requests/refund/activities.mjs',
  },
  'release-advisors': { request: 'requests/release-advisors/release.json', summary: 'advisors speak first; a new meta comes back' },
  tiers: { request: 'requests/tiers/planner.json', summary: 'a deep planner hands sub-tasks to fast workers' },
  speaker: {
    request: 'requests/speaker/orchestrator.json',
    summary: "a delegate whose input schema differs from the tool's parameters",
    input: '{"userId":"u_123","text":"Hello, world!"}',
  },
  summarizer: { request: 'requests/summarizer/meeting.json', summary: 'a delegate that sees only the state scoped to it' },
};

/** The option that runs an example. */
const EXAMPLE_FLAG = '--example';
/** The option that lists the examples. */
export const EXAMPLES_FLAG = '--examples';

/** The text `--examples` prints on stdout: each example's name and what it shows, and how to run one (CLI-31). */
export function examplesText(): string {
  const width = Math.max(...Object.keys(EXAMPLES).map((name) => name.length));
  const rows = Object.entries(EXAMPLES).map(([name, example]) => `  ${name.padEnd(width)}  ${example.summary}`);
  return [
    'Examples shipped with delegate-run, each runnable offline:',
    ...rows,
    '',
    `Run one with: delegate-run --example <name> [options]   (e.g. delegate-run --example music --json)`,
    `Their Requests and cassettes are in ${join(PACKAGE_ROOT, 'requests')}`,
    '',
  ].join('\n');
}

/**
 * The command line with `--example <name>` (or `--example=<name>`) replaced by what the example
 * runs with (CLI-31): its Request, its input, its Activities module and `--model replay:` its
 * cassette, each by absolute path, put before the other arguments so that those given win
 * (`--input`, `--model`; `--activities` adds). Undefined for a command line without `--example`.
 * An unknown name or a second `--example` is a UsageError; a request given beside it is refused
 * as any second request is (CLI-11).
 */
export function exampleArguments(argv: readonly string[]): string[] | undefined {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  const at = options.findIndex((argument) => argument === EXAMPLE_FLAG || argument.startsWith(`${EXAMPLE_FLAG}=`));
  if (at === -1) return undefined;
  const given = argv[at] as string;
  const inline = given.startsWith(`${EXAMPLE_FLAG}=`);
  const name = inline ? given.slice(EXAMPLE_FLAG.length + 1) : argv[at + 1];
  const rest = [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))];
  const example = name !== undefined && Object.hasOwn(EXAMPLES, name) ? EXAMPLES[name] : undefined;
  if (name === undefined || example === undefined) {
    const got = name === undefined || name.startsWith('--') ? 'no name' : `"${name}"`;
    throw new UsageError(
      `${EXAMPLE_FLAG} expects the name of an example, one of ${Object.keys(EXAMPLES).join(', ')}; got ${got}. ${EXAMPLES_FLAG} lists them.`,
    );
  }
  if (rest.some((argument) => argument === EXAMPLE_FLAG || argument.startsWith(`${EXAMPLE_FLAG}=`))) {
    throw new UsageError(`${EXAMPLE_FLAG} runs one example; it was given twice.`);
  }
  const request = join(PACKAGE_ROOT, example.request);
  const cassette = request.replace(/\.json$/, '.cassette.json');
  return [
    request,
    ...(example.input === undefined ? [] : ['--input', example.input.startsWith('@') ? `@${join(PACKAGE_ROOT, example.input.slice(1))}` : example.input]),
    ...(example.activities === undefined ? [] : ['--activities', join(PACKAGE_ROOT, example.activities)]),
    // The cassette is named outright, so an API key in the environment does not make the example live (CLI-3).
    ...(existsSync(cassette) ? ['--model', `replay:${cassette}`] : []),
    ...rest,
  ];
}
