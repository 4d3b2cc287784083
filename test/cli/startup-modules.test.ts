/** What a start loads (CLI-34): `--version`, a model-free plan run and the library's import load none of the heavy packages, recorded module by module in a real process. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, offlineEnv } from '../helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const RECORDER = resolve(import.meta.dirname, '../helpers/record-modules.mjs');
const temp = mkdtempSync(join(tmpdir(), 'startup-modules-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * The packages no start may load unless the run uses them: the provider SDKs, the queue, MCP (and
 * zod under it), OpenTelemetry, A2A, the price data, the browser, the HTTP client, the allOf merger
 * (and lodash under it).
 */
const HEAVY = [
  'openai',
  '@anthropic-ai/sdk',
  'bullmq',
  'ioredis',
  '@modelcontextprotocol/sdk',
  'zod',
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/semantic-conventions',
  '@opentelemetry/resources',
  '@opentelemetry/core',
  '@a2a-js/sdk',
  '@pydantic/genai-prices',
  'playwright-core',
  'undici',
  'json-schema-merge-allof',
  'lodash',
];

/**
 * The packages of node_modules a list of loaded files comes from, each named once: a file of the
 * executables' bundle (dist/bundle) counts the packages inlined into it, as its source map lists
 * them, so a heavy package the bundle inlined is caught as surely as one loaded from node_modules.
 */
function packagesOf(files: readonly string[]): string[] {
  const names = files.flatMap(sourcesOf).flatMap((file) => {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    return match ? [match[1] as string] : [];
  });
  return [...new Set(names)].sort();
}

/** The files whose code a loaded file holds: a bundle file's sources (by its linked source map), or the file itself. */
function sourcesOf(file: string): string[] {
  if (!file.includes('/dist/bundle/')) return [file];
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) => resolve(dirname(file), source));
}

let count = 0;

/** Runs `node <args>` in the package's folder with the recorder; its exit status, stdout and the files it loaded. */
function recorded(args: string[]): { status: number | null; stdout: string; stderr: string; files: string[] } {
  const log = join(temp, `modules-${count++}.txt`);
  const child = spawnSync(process.execPath, ['--import', RECORDER, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: offlineEnv({ RECORD_MODULES: log, NO_COLOR: '1' }),
    timeout: 30_000,
  });
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (line.startsWith('file:') ? fileURLToPath(line) : line));
  return { status: child.status, stdout: child.stdout, stderr: child.stderr, files };
}

describe('what a start loads (CLI-34)', () => {
  it('delegate-run --version reads package.json and loads no package at all', () => {
    const run = recorded([BIN, '--version']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
    expect(packagesOf(run.files)).toEqual([]);
    // The executable's own wiring, not the command: a handful of modules of the package.
    expect(run.files.filter((file) => file.includes('/dist/')).length).toBeLessThan(10);
  });

  it('a model-free plan run loads none of the heavy packages, and the precompiled validators instead of compiling spec/schemas', () => {
    const run = recorded([BIN, 'requests/plan/welcome.json', '--input', '{"name":"Ada"}', '--json']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, output: { title: 'Welcome aboard, Ada!', team: 'Platform' } });
    expect(packagesOf(run.files).filter((name) => HEAVY.includes(name))).toEqual([]);
    expect(run.files).toContain(join(ROOT, 'dist/protocol/document-validators.cjs'));
    // ajv is there for the Request's own schemas, but its standalone code generator never is.
    expect(run.files.flatMap(sourcesOf).some((file) => file.includes('/ajv/dist/standalone/'))).toBe(false);
    // The executable is the build's bundle (CLI-34): a few dozen files, not dist's ~150 modules and ajv's ~90.
    expect(run.files.filter((file) => file.includes('/dist/bundle/')).length).toBeGreaterThan(0);
    expect(run.files.length).toBeLessThan(60);
  });

  it("import('delegate-run') loads none of the heavy packages, and no ajv", () => {
    const run = recorded(['--input-type=module', '-e', "await import('delegate-run')"]);
    expect(run.status, run.stderr).toBe(0);
    const packages = packagesOf(run.files);
    expect(packages.filter((name) => HEAVY.includes(name) || name === 'ajv')).toEqual([]);
    expect(run.files.some((file) => file.endsWith('/dist/library/index.js'))).toBe(true);
  });
});
