/** Every shell command of README.md and docs/*.md runs as written, offline, from the repository root, and ends as documented. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { offlineEnv } from './helpers/cli.js';
import { type DocBlock, type DocCommand, documentationPages, listeningPort, runnableText, shellBlocks } from './helpers/doc-commands.js';
import { accepting, REDIS_SKIP_REASON, redisAvailable } from './helpers/redis-server.js';

const ROOT = resolve(import.meta.dirname, '..');
const PAGES = documentationPages(ROOT);
const BLOCKS = PAGES.flatMap((page) => shellBlocks(ROOT, page));

/** A generous bound on one command, so a hang fails the test instead of holding it (not a timing claim). */
const COMMAND_LIMIT_MS = 60_000;
/** Blocks run at once: the machine has two cores, and each command starts Node through npx. */
const PARALLEL_BLOCKS = 3;

/** The entries of the repository root before any command ran: a new entry that a command names (or names the stem of) is removed afterwards. */
const ROOT_BEFORE = new Set(readdirSync(ROOT));
afterAll(() => {
  // Only what the commands wrote (a trace, a page, a journal): new entries of the root whose name a documented command mentions.
  const written = readdirSync(ROOT).filter((entry) => !ROOT_BEFORE.has(entry));
  for (const entry of written) {
    const stem = `${entry.replace(/\.[^.]*$/, '')}.`; // `view music.jsonl` writes music.html
    const named = BLOCKS.some((block) => block.commands.some((command) => command.text.includes(entry) || command.text.includes(stem)));
    if (named) rmSync(join(ROOT, entry), { recursive: true, force: true });
  }
});

/**
 * A folder holding an `npx` that starts the project's own executables (package.json `bin`) with Node at once, and hands
 * anything else to the real npx: what npx does from the root, without npm's start-up for each of the many commands. One
 * test below runs the real npx, so that the commands as a reader types them are covered too.
 */
function npxShortcut(): string {
  const folder = mkdtempSync(join(tmpdir(), 'delegate-docs-npx-'));
  const realNpx = execFileSync('bash', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
  const bins = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin as Record<string, string>;
  const cases = Object.entries(bins).map(([name, file]) => `  ${name}) shift; exec "${process.execPath}" "${join(ROOT, file)}" "$@" ;;`);
  writeFileSync(join(folder, 'npx'), ['#!/usr/bin/env bash', 'case "$1" in', ...cases, 'esac', `exec "${realNpx}" "$@"`, ''].join('\n'), { mode: 0o755 });
  return folder;
}

const NPX_FOLDER = npxShortcut();
afterAll(() => rmSync(NPX_FOLDER, { recursive: true, force: true }));

/** The environment of a documented command: offline (no keys, no base URLs, no models file of the machine's), npm never online. */
function commandEnv(options: { realNpx?: boolean } = {}): NodeJS.ProcessEnv {
  const env = offlineEnv({ NO_COLOR: '1', npm_config_offline: 'true', npm_config_update_notifier: 'false' });
  for (const key of ['DELEGATE_MODELS', 'DELEGATE_MODEL_TIMEOUT']) delete env[key];
  if (options.realNpx !== true) env.PATH = `${NPX_FOLDER}${delimiter}${env.PATH ?? ''}`;
  return env;
}

/** A command started with bash in its own process group, so that stopping it stops npx and what npx started. */
function startShell(
  text: string,
  cwd: string,
  options: { realNpx?: boolean } = {},
): { child: ChildProcess; output: () => string; done: Promise<number | null> } {
  const child = spawn('bash', ['-c', text], { cwd, env: commandEnv(options), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<number | null>((resolveExit) => child.on('close', (code) => resolveExit(code)));
  return { child, output: () => output, done };
}

function stopGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group has already gone.
  }
}

/** Where a command is written, for failure messages. */
function placeOf(command: DocCommand): string {
  return `${command.file}:${command.line}: ${command.text}`;
}

/** Starts a background server and waits until it is ready: its port accepts connections, or, without a port, it has said something. */
async function startBackground(command: DocCommand, cwd: string): Promise<() => Promise<void>> {
  const port = listeningPort(command);
  if (port !== undefined && (await accepting(port))) throw new Error(`${placeOf(command)}\nport ${port} is already in use on this machine`);
  const started = startShell(runnableText(command), cwd);
  let exited = false;
  void started.done.then(() => (exited = true));
  const since = Date.now();
  while (!(port === undefined ? started.output().includes('\n') : await accepting(port))) {
    if (exited || Date.now() - since > 20_000) {
      stopGroup(started.child, 'SIGKILL');
      throw new Error(`${placeOf(command)}\nthe server did not become ready:\n${started.output()}`);
    }
    await new Promise((wait) => setTimeout(wait, 50));
  }
  return async () => {
    stopGroup(started.child, 'SIGTERM');
    const timer = setTimeout(() => stopGroup(started.child, 'SIGKILL'), 10_000);
    await started.done;
    clearTimeout(timer);
  };
}

/** Runs a foreground command to its end and checks its exit status against the documented one. */
async function runForeground(command: DocCommand, cwd: string): Promise<void> {
  const started = startShell(runnableText(command), cwd);
  const timer = setTimeout(() => stopGroup(started.child, 'SIGKILL'), COMMAND_LIMIT_MS);
  const code = await started.done;
  clearTimeout(timer);
  expect(code, `${placeOf(command)}\nexited ${code}, documented ${command.exitCode}; its output:\n${started.output().slice(-3000)}`).toBe(command.exitCode);
}

/** Runs a block's commands in order in one folder; servers it starts are stopped when it ends. */
async function runBlock(block: DocBlock): Promise<void> {
  // From the repository root, as a reader runs them: npx finds the project's executables there, without installing anything.
  const cwd = ROOT;
  const stops: Array<() => Promise<void>> = [];
  const stopped = new Set<number>();
  try {
    for (const command of block.commands) {
      if (command.skip !== undefined) continue;
      if (command.background) stops.push(await startBackground(command, cwd));
      else if (command.stopsJob !== undefined) {
        // `kill %N` as a reader types it stops the block's Nth background server: each command runs in a shell of its own, so the test stops it.
        const stop = stops[command.stopsJob - 1];
        if (stop === undefined || stopped.has(command.stopsJob)) throw new Error(`${placeOf(command)}\nno background server %${command.stopsJob} is running`);
        stopped.add(command.stopsJob);
        await stop();
      } else await runForeground(command, cwd);
    }
  } finally {
    for (const [index, stop] of [...stops.entries()].reverse()) if (!stopped.has(index + 1)) await stop();
  }
}

/** At most `limit` tasks at once; `exclusive` tasks (those that start servers on fixed ports) one at a time. */
function limiter(limit: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  let servers: Promise<void> = Promise.resolve();
  const slot = async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((wake) => waiting.push(wake));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
  return <T>(task: () => Promise<T>, exclusive: boolean): Promise<T> => {
    if (!exclusive) return slot(task);
    const turn = servers.then(() => slot(task));
    servers = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  };
}

const schedule = limiter(PARALLEL_BLOCKS);

/** Why a whole block is skipped on this machine, when it is. */
function blockSkip(block: DocBlock): string | undefined {
  const runnable = block.commands.filter((command) => command.skip === undefined);
  if (runnable.length === 0) return block.commands[0]?.skip ?? 'no commands';
  if (!redisAvailable && runnable.some((command) => /\bredis-server\b/.test(command.text))) return REDIS_SKIP_REASON;
  return undefined;
}

describe('the commands of the documentation', () => {
  it('finds shell blocks in the README and the guides', () => {
    expect(existsSync(join(ROOT, 'dist/bundle/run.js')), 'npm run build first: the commands run the built executables').toBe(true);
    expect(BLOCKS.filter((block) => block.file === 'README.md').length).toBeGreaterThan(0);
    expect(PAGES.length).toBeGreaterThan(1);
  });

  it("runs the README's first command with the real npx, as a reader does", async () => {
    const first = BLOCKS[0]?.commands[0];
    expect(first?.text).toMatch(/^npm ci && npx delegate-run /);
    const started = startShell(runnableText(first as DocCommand), ROOT, { realNpx: true });
    expect(await started.done, started.output()).toBe(0);
  }, 120_000);

  for (const block of BLOCKS) {
    const first = block.commands[0]?.text.split('\n')[0] ?? '';
    const title = `${block.file}:${block.line} (${block.commands.length} command${block.commands.length === 1 ? '' : 's'}): ${first}`;
    const skip = blockSkip(block);
    if (skip !== undefined) {
      it.skip(`${title} — ${skip}`, () => {});
      continue;
    }
    for (const command of block.commands.filter((each) => each.skip !== undefined)) {
      it.skip(`${placeOf(command)} — ${command.skip}`, () => {});
    }
    const exclusive = block.commands.some((command) => command.background);
    it.concurrent(title, () => schedule(() => runBlock(block), exclusive), 180_000);
  }
});

describe('the front page and its links', () => {
  it('keeps README.md a front page: at most 250 lines and 15,000 bytes', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length - 1).toBeLessThanOrEqual(250);
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15_000);
  });

  it('leaves rule ids to spec/: the README and the guides link to its chapters instead', () => {
    const prefixes = [...readFileSync(join(ROOT, 'spec/README.md'), 'utf8').matchAll(/\| `([A-Z]+)` \|/g)].map((match) => match[1]);
    expect(prefixes.length).toBeGreaterThan(10);
    const ruleId = new RegExp(`\\b(${prefixes.join('|')})-\\d+`, 'g');
    const cited = PAGES.flatMap((page) => [...readFileSync(join(ROOT, page), 'utf8').matchAll(ruleId)].map((match) => `${page}: ${match[0]}`));
    expect(cited).toEqual([]);
  });

  it('links only to files that exist', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (match[1] as string).split('#')[0] as string;
        if (target === '' || /^[a-z]+:/.test(target)) continue;
        if (!existsSync(resolve(ROOT, dirname(page), decodeURIComponent(target)))) broken.push(`${page}: ${match[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
