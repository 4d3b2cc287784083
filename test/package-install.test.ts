/**
 * The package as a user gets it: `npm pack`'s tarball installed with npm, globally into a temporary prefix and as the
 * dependency of an empty project, from a registry on 127.0.0.1 serving the runtime dependencies package-lock.json pins
 * (their tarballs from the npm cache `npm ci` filled, never the network); then its four executables, an example run
 * offline, delegate-mcp through the official MCP client, and every MCP client configuration of the docs, launched as a
 * client would launch it.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Role, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineEnv } from './helpers/cli.js';
import { type LockfileRegistry, lockedRuntimePackages, npmCacheFolder, startLockfileRegistry } from './helpers/lockfile-registry.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
const BINARIES = Object.keys(PACKAGE.bin);
/** A generous bound on one npm install, so a hang fails the test instead of holding it (not a timing claim). */
const INSTALL_LIMIT_MS = 240_000;

/** Runtime dependencies (not optional ones, such as another platform's binary) whose tarball the npm cache lacks: then npm cannot install offline here. */
const UNCACHED = lockedRuntimePackages(join(ROOT, 'package-lock.json'), npmCacheFolder())
  .filter((served) => !served.file && !served.optional)
  .map((served) => `${served.name}@${served.version}`);
const SKIP_REASON = `skipped: the npm cache lacks ${UNCACHED.slice(0, 3).join(', ')}${UNCACHED.length > 3 ? '…' : ''}, so npm cannot install offline (run npm ci first)`;

/** npm's environment: the test's, without the npm_config_* a parent `npm test` passes down, and no update check. */
function npmEnv(): NodeJS.ProcessEnv {
  const env = offlineEnv({ npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
  for (const key of Object.keys(env)) if (/^npm_config_(?!update_notifier|fund|audit)/i.test(key)) delete env[key];
  return env;
}

/** A server of a client's configuration, as the docs give it. */
interface ServerConfiguration {
  type?: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The MCP client configurations of the docs: each JSON block with `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code). */
function mcpConfigurations(): { line: number; key: 'mcpServers' | 'servers'; servers: Record<string, ServerConfiguration> }[] {
  const text = readFileSync(join(ROOT, 'docs', '06-serving-and-mcp.md'), 'utf8');
  const blocks = [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)];
  // Blocks of several JSON lines (the toolsets of a Request) are not configurations: they hold neither key.
  const configurations = blocks.filter((block) => /"(mcpServers|servers)"\s*:/.test(block[1] as string));
  return configurations.map((block) => {
    const value = JSON.parse(block[1] as string) as { mcpServers?: Record<string, ServerConfiguration>; servers?: Record<string, ServerConfiguration> };
    const line = text.slice(0, block.index).split('\n').length;
    return value.mcpServers ? { line, key: 'mcpServers', servers: value.mcpServers } : { line, key: 'servers', servers: value.servers ?? {} };
  });
}

/** Starts a server as an MCP client does from its configuration, lists its tools, calls `welcome` (a plan: no model) and closes. */
async function listAndCall(server: ServerConfiguration, env: NodeJS.ProcessEnv): Promise<{ tools: string[]; output: unknown }> {
  // The configuration's placeholder key reaches the server, as a client passes it; a model call it led to would meet a closed loopback port.
  const closed = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args ?? [],
    env: { ...(env as Record<string, string>), ...server.env, ...closed },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'package-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'welcome', arguments: { name: 'Ada' } });
    return { tools: tools.map((tool) => tool.name), output: result.structuredContent };
  } finally {
    await client.close();
  }
}

const FOLDER = mkdtempSync(join(tmpdir(), 'delegate-package-'));
// Two installs are thousands of files: a generous bound on removing them.
afterAll(() => rm(FOLDER, { recursive: true, force: true }), 120_000);

describe('the MCP client configurations of the docs', () => {
  it('give Claude Desktop and Cursor (mcpServers) and VS Code (servers) the installed binary and a clone, never npx', () => {
    const configurations = mcpConfigurations();
    const forms = configurations.flatMap(({ key, servers }) => Object.values(servers).map((server) => `${key}: ${server.command}`));
    expect(new Set(forms)).toEqual(new Set(['mcpServers: delegate-mcp', 'mcpServers: node', 'servers: delegate-mcp', 'servers: node']));
    for (const { servers } of configurations.filter(({ key }) => key === 'servers'))
      for (const server of Object.values(servers)) expect(server.type).toBe('stdio');
    expect(JSON.stringify(configurations)).not.toContain('npx');
  });

  it('from a clone: each launches this clone’s delegate-mcp, which lists its tools and answers a call', { timeout: 60_000 }, async () => {
    const clones = mcpConfigurations().filter(({ servers }) => Object.values(servers).every((server) => server.command === 'node'));
    expect(clones.length).toBeGreaterThan(0);
    for (const { line, servers } of clones) {
      for (const server of Object.values(servers)) {
        const args = (server.args ?? []).map((argument) => argument.replace('/absolute/path/to/clone', ROOT));
        expect(args[0], `docs/06-serving-and-mcp.md:${line}`).toBe(join(ROOT, 'dist', 'bundle', 'mcp.js'));
        const { tools, output } = await listAndCall({ ...server, args }, offlineEnv());
        expect(tools, `docs/06-serving-and-mcp.md:${line}`).toContain('welcome');
        expect(output).toEqual({ title: 'Welcome aboard, Ada!', team: 'Platform' });
      }
    }
  });
});

describe.skipIf(UNCACHED.length > 0)(UNCACHED.length > 0 ? `the installed package, ${SKIP_REASON}` : 'the package installed from npm pack’s tarball', () => {
  let registry: LockfileRegistry;
  let tarball: string;
  const prefix = join(FOLDER, 'global');
  const project = join(FOLDER, 'project');
  const work = join(FOLDER, 'work');
  const bin = (name: string) => join(prefix, 'bin', name);
  const installed = join(prefix, 'lib', 'node_modules', PACKAGE.name);

  beforeAll(async () => {
    // The tarball of the built dist/ (npm test builds first); --ignore-scripts, so that `prepare` does not rebuild dist/ under other tests.
    if (!existsSync(join(ROOT, 'dist', 'bundle', 'run.js'))) throw new Error('dist/ is not built: run npm run build first.');
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', FOLDER], { cwd: ROOT, env: npmEnv() });
    tarball = join(FOLDER, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename as string);
    registry = await startLockfileRegistry(join(ROOT, 'package-lock.json'));
    const npm = ['--registry', registry.url, '--cache', join(FOLDER, 'npm-cache'), '--no-audit', '--no-fund'];
    mkdirSync(project);
    mkdirSync(work);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true })}\n`);
    await Promise.all([
      run('npm', ['install', '--global', '--prefix', prefix, tarball, ...npm], { cwd: work, env: npmEnv(), timeout: INSTALL_LIMIT_MS }),
      run('npm', ['install', tarball, ...npm], { cwd: project, env: npmEnv(), timeout: INSTALL_LIMIT_MS }),
    ]);
  }, INSTALL_LIMIT_MS + 60_000);
  afterAll(() => registry?.close());

  it('holds what the code reads at run time, and no sources or tests', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const files = new Set(stdout.split('\n').map((file) => file.replace(/^package\//, '')));
    for (const file of [
      ...Object.values(PACKAGE.bin),
      'models.json',
      'spec/schemas/request.schema.json',
      'dist/viewer/page.js',
      'dist/viewer/page.css',
      'requests/music/producer.cassette.json',
      'examples/music-input.json',
    ]) {
      expect(files, file).toContain(file);
    }
    expect([...files].filter((file) => /^(src|test|bench)\//.test(file))).toEqual([]);
  });

  it('installs globally with its four executables, each printing its version and its usage', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const name of BINARIES) {
      const printed = await run(bin(name), ['--version'], { cwd: work, env: offlineEnv() });
      expect(printed.stdout.trim(), name).toBe(version);
      const { stdout } = await run(bin(name), ['--help'], { cwd: work, env: offlineEnv() });
      expect(stdout, name).toContain(`Usage: ${name}`);
    }
  });

  it('runs an example offline from the global install, wherever it is started, and views its trace', async () => {
    const listed = await run(bin('delegate-run'), ['--examples'], { cwd: work, env: offlineEnv() });
    expect(listed.stdout).toContain('music');
    // An API key in the environment does not make the example live: it replays its cassette (CLI-31).
    const { stdout } = await run(bin('delegate-run'), ['--example', 'music', '--json', '--quiet', '--trace', 'music.jsonl'], {
      cwd: work,
      env: offlineEnv({ OPENAI_API_KEY: 'sk-not-used' }),
    });
    const result = JSON.parse(stdout) as { ok: boolean; output: { title: string } };
    expect(result.ok).toBe(true);
    expect(result.output.title).toBe('Rain on Empty Streets');
    // The viewer reads its page's script and styles from the package at run time.
    const view = await run(bin('delegate-run'), ['view', 'music.jsonl'], { cwd: work, env: offlineEnv() });
    expect(view.stdout.trim()).toBe(join(work, 'music.html'));
    expect(readFileSync(join(work, 'music.html'), 'utf8')).toContain('<style>');
  });

  it('serves the installed examples through delegate-mcp to the official MCP client', { timeout: 30_000 }, async () => {
    const { tools, output } = await listAndCall({ command: bin('delegate-mcp'), args: [join(installed, 'requests')] }, offlineEnv());
    expect(tools).toEqual(expect.arrayContaining(['welcome', 'producer', 'forecast']));
    expect(output).toEqual({ title: 'Welcome aboard, Ada!', team: 'Platform' });
  });

  it('serves the installed examples as A2A agents to the official A2A client (delegate-serve --a2a)', { timeout: 60_000 }, async () => {
    const server = spawn(bin('delegate-serve'), [join(installed, 'requests'), '--a2a', '--port', '0'], {
      cwd: work,
      env: offlineEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const origin = await new Promise<string>((found, failed) => {
        let said = '';
        server.stderr.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(said);
          if (match?.[1]) found(match[1]);
        });
        server.once('exit', (code) => failed(new Error(`delegate-serve --a2a exited ${code}: ${said}`)));
      });
      const client = await new ClientFactory().createFromUrl(`${origin}/a2a/plan/welcome/`);
      const message = {
        messageId: 'm1',
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'data' as const, value: { name: 'Ada' } }, mediaType: 'application/json', filename: '', metadata: undefined }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      const task = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined })) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'data', value: { title: 'Welcome aboard, Ada!', team: 'Platform' } });
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('launches each MCP client configuration of the docs for the installed binary', { timeout: 60_000 }, async () => {
    const installedForms = mcpConfigurations().filter(({ servers }) => Object.values(servers).every((server) => server.command === 'delegate-mcp'));
    expect(installedForms.length).toBeGreaterThan(0);
    const env = offlineEnv({ PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` });
    for (const { line, servers } of installedForms) {
      for (const server of Object.values(servers)) {
        const args = (server.args ?? []).map((argument) => argument.replace('/absolute/path/to/requests', join(installed, 'requests')));
        const { tools } = await listAndCall({ ...server, args }, env);
        expect(tools, `docs/06-serving-and-mcp.md:${line}`).toContain('welcome');
      }
    }
  });

  it('installs as the dependency of an empty project, with no devDependency, its library and executables working', async () => {
    const modules = join(project, 'node_modules');
    for (const dev of ['typescript', 'vitest', '@biomejs/biome', 'fast-check', 'playwright-core']) expect(existsSync(join(modules, dev)), dev).toBe(false);
    const { stdout } = await run(join(modules, '.bin', 'delegate-run'), ['--example', 'plan', '--json', '--quiet'], { cwd: project, env: offlineEnv() });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, output: { title: 'Welcome aboard, Ada!' } });
    const library = await run(
      process.execPath,
      ['--input-type=module', '-e', `import { createRuntime } from '${PACKAGE.name}'; console.log(typeof createRuntime);`],
      {
        cwd: project,
        env: offlineEnv(),
      },
    );
    expect(library.stdout.trim()).toBe('function');
  });
});
