// The shell commands of the documentation: read from README.md and docs/*.md by the convention docs/README.md states.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One shell command of a documentation page, as written there. */
export interface DocCommand {
  /** The page, relative to the repository root (`docs/05-command-line.md`). */
  file: string;
  /** The line of the page the command starts on (1-based). */
  line: number;
  /** The command as written, continuation lines and trailing comment included. */
  text: string;
  /** The exit status the page documents (`# exit 2`), else 0. */
  exitCode: number;
  /** True when the command ends with `&`: a server started in the background for the commands after it. */
  background: boolean;
  /** For `kill %N`: N, the block's background server (counted from 1, as the shell numbers its jobs) the command stops. */
  stopsJob?: number;
  /** Why the command is not run by the test, when it is not. */
  skip?: string;
}

/** A fenced ```sh or ```bash block: its commands run in order, in one folder. */
export interface DocBlock {
  file: string;
  line: number;
  commands: DocCommand[];
}

/** The markers a page puts on the line before a block the test does not run: it cannot run offline, or it should not run in a test. */
const SKIP_MARKER = /^<!--\s*(offline:\s*no|doc-test:\s*skip)\s*\((.+)\)\s*-->$/;
const SHELL_FENCE = /^```(sh|bash)\s*$/;

/** The pages whose commands are documented: README.md, then docs/*.md in order. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every shell block of `file` (relative to `root`), with its commands. */
export function shellBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const fence = (lines[index] as string).trimEnd();
    if (!fence.startsWith('```')) {
      index += 1;
      continue;
    }
    const start = index;
    let end = index + 1;
    while (end < lines.length && !(lines[end] as string).startsWith('```')) end += 1;
    if (SHELL_FENCE.test(fence)) {
      const marker = SKIP_MARKER.exec(previousLine(lines, start));
      const skip = marker === null ? undefined : `${(marker[1] as string).replace(/\s+/g, ' ')} (${marker[2]})`;
      blocks.push({ file, line: start + 1, commands: commandsOf(file, lines.slice(start + 1, end), start + 2, skip) });
    }
    index = end + 1;
  }
  return blocks;
}

/** The last non-blank line before `index`. */
function previousLine(lines: string[], index: number): string {
  for (let at = index - 1; at >= 0; at -= 1) {
    const line = (lines[at] as string).trim();
    if (line !== '') return line;
  }
  return '';
}

/** The commands of a block's lines: comment lines dropped, `\` continuations joined. */
function commandsOf(file: string, lines: string[], firstLine: number, marked: string | undefined): DocCommand[] {
  const commands: DocCommand[] = [];
  let pending: { line: number; parts: string[] } | undefined;
  lines.forEach((raw, offset) => {
    if (pending === undefined && (raw.trim() === '' || raw.trim().startsWith('#'))) return;
    pending ??= { line: firstLine + offset, parts: [] };
    pending.parts.push(raw);
    if (raw.trimEnd().endsWith('\\')) return;
    commands.push(describeCommand(file, pending.line, pending.parts.join('\n'), marked));
    pending = undefined;
  });
  if (pending !== undefined) commands.push(describeCommand(file, pending.line, pending.parts.join('\n'), marked));
  return commands;
}

function describeCommand(file: string, line: number, text: string, marked: string | undefined): DocCommand {
  const code = withoutComment(text).trim();
  const exitCode = Number(/#\s*exit\s+(\d+)/.exec(commentOf(text))?.[1] ?? 0);
  const command: DocCommand = { file, line, text, exitCode, background: code.endsWith('&') && !code.endsWith('&&') };
  const job = /^kill %(\d+)$/.exec(code)?.[1];
  if (job !== undefined) command.stopsJob = Number(job);
  const skip = marked ?? skipReason(code);
  if (skip !== undefined) command.skip = skip;
  return command;
}

/** Why a command is never run by the test, whatever its page says. */
function skipReason(code: string): string | undefined {
  if (/^npm (run )?test\b/.test(code)) return 'npm test: the whole suite, of which this test is a part';
  if (/\bnpm ci\b/.test(code) && !/^npm ci && /.test(code)) return 'npm ci: installs the packages the test already runs with';
  return undefined;
}

/** What the test runs for a command: `npm ci && rest` runs `rest` (the packages are installed), a background command without its `&`. */
export function runnableText(command: DocCommand): string {
  let code = withoutComment(command.text).trim();
  if (code.startsWith('npm ci && ')) code = code.slice('npm ci && '.length);
  if (command.background) code = code.slice(0, -1).trim();
  return code;
}

/** The TCP port a background command listens on (`--port`, `--http`), if it names one. */
export function listeningPort(command: DocCommand): number | undefined {
  const port = /--(?:port|http)[ =](\d+)/.exec(withoutComment(command.text))?.[1];
  return port === undefined ? undefined : Number(port);
}

/** Where the trailing `#` comment of a command starts (outside quotes), or -1. */
function commentStart(text: string): number {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
    } else if (character === "'" || character === '"') {
      quote = character;
    } else if (character === '#' && (index === 0 || /\s/.test(text[index - 1] as string))) {
      return index;
    }
  }
  return -1;
}

function withoutComment(text: string): string {
  const start = commentStart(text);
  return start === -1 ? text : text.slice(0, start);
}

function commentOf(text: string): string {
  const start = commentStart(text);
  return start === -1 ? '' : text.slice(start);
}
