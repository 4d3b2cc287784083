// Runs the built `delegate-run` binary as a child process, offline (no API keys in its environment).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The built binaries, as package.json's `bin` names them: the build's bundle (CLI-34). `npm test` builds before it runs the tests. */
export const BIN = resolve('dist/bundle/run.js');
export const SERVE_BIN = resolve('dist/bundle/serve.js');

/** What a finished CLI run left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child CLI: the parent's, less model keys and base URLs. */
export function offlineEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // The machine's keys are removed first, so the keys a test passes in `extra` stay.
  const env = { ...process.env };
  for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL']) delete env[key];
  return { ...env, ...extra };
}

/** Starts the CLI, offline but for the variables in `env`; `done` resolves when it exits. */
export function startCli(
  args: string[],
  options: { cwd?: string; bin?: string; env?: Record<string, string> } = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: offlineEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolvePromise) => {
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Waits until `condition` holds, polling; fails instead of hanging after `timeoutMs` (a generous bound, not a timing claim). */
export async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('Timed out waiting for a condition.');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Fails the test instead of hanging when the CLI does not exit: a generous bound, not a timing claim. */
export async function exited(done: Promise<CliResult>, what: string, ms = 10_000): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: the CLI had not exited after ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([done, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the CLI to completion. */
export function runCli(args: string[], options: { cwd?: string; bin?: string } = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** A fresh temp folder. */
export function tempDir(prefix = 'delegate-run-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A fresh folder holding `files` (`{relative path: JSON value}`), parent folders created. */
export function folderWith(files: Record<string, unknown>, prefix = 'delegate-run-'): string {
  const root = tempDir(prefix);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), JSON.stringify(content));
  }
  return root;
}

/** Reads the events of a journal a run may still be writing: none before the file exists, a half-written line skipped. */
export function readJournal(path: string): Array<Record<string, unknown> & { event: string }> {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown> & { event: string }];
      } catch {
        return [];
      }
    });
}

/** Reads a JSONL trace. */
export function readTrace(path: string): Array<Record<string, unknown> & { event: string }> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown> & { event: string });
}
