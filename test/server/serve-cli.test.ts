/** Tests of the `delegate-serve` command: arguments, startup line, serving on port 0, access log, graceful shutdown. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, USAGE, type ServeCommandIo } from '../../src/cli/serve.js';
import { createServeFixture, HELLO, type ServeFixture } from './serve-fixture.js';

/** The compiled executable; `npm test` builds it first. Override with DELEGATE_SERVE_SCRIPT. */
const SCRIPT = resolve(process.env.DELEGATE_SERVE_SCRIPT ?? 'dist/bundle/serve.js');

let fixture: ServeFixture;

beforeAll(async () => {
  fixture = await createServeFixture();
});

afterAll(async () => {
  await fixture.remove();
});

/** Captures what `main` writes. */
function captureIo(extra: ServeCommandIo = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: ServeCommandIo = {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    ...extra,
  };
  return { io, stdout: () => out.join(''), stderrLines: () => err.join('').split('\n').filter(Boolean) };
}

/** Starts `main` on port 0 and waits until it listens. */
async function startMain(argv: string[], extra: ServeCommandIo = {}) {
  let listening: (server: { url: string; port: number; root: string }) => void = () => undefined;
  const ready = new Promise<{ url: string; port: number; root: string }>((resolveReady) => {
    listening = resolveReady;
  });
  const captured = captureIo({ ...extra, onListening: listening });
  const exit = main(argv, captured.io);
  const server = await Promise.race([
    ready,
    exit.then((code) => Promise.reject(new Error(`main exited early with ${code}: ${captured.stderrLines().join(' | ')}`))),
  ]);
  return { ...captured, server, exit };
}

describe('delegate-serve arguments', () => {
  it('prints usage on stdout for --help and exits 0', async () => {
    const { io, stdout, stderrLines } = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(stdout()).toBe(USAGE);
    expect(stdout()).toContain('delegate-serve [dir] [--port 8787] [--host 127.0.0.1]');
    expect(stderrLines()).toEqual([]);
  });

  it.each([
    [['--port'], /port/],
    [['--port', 'abc'], /--port/],
    [['--port', '70000'], /--port/],
    [['--port', '-1'], /port/],
    [['--host', ''], /--host/],
    [['one', 'two'], /at most one folder/],
  ])('rejects %j with a message and usage on stderr, exit 2', async (argv, pattern) => {
    const { io, stdout, stderrLines } = captureIo();
    expect(await main(argv, io)).toBe(2);
    const err = stderrLines().join('\n');
    expect(err).toMatch(pattern);
    expect(err).toContain('Usage: delegate-serve');
    expect(stdout()).toBe('');
  });

  it('names an unknown option and the nearest one in one line, without the usage, exit 2 (CLI-29)', async () => {
    const { io, stdout, stderrLines } = captureIo();
    expect(await main(['--bogus'], io)).toBe(2);
    expect(stderrLines().join('\n')).toBe('delegate-serve: unknown option --bogus (--help lists them)');
    expect(await main(['--hots', '127.0.0.1'], io)).toBe(2);
    expect(stderrLines().at(-1)).toBe('delegate-serve: unknown option --hots; did you mean --host?');
    expect(stdout()).toBe('');
  });

  it('exits 2 naming a folder that does not exist', async () => {
    const { io, stderrLines } = captureIo({ cwd: fixture.base });
    expect(await main(['no-such-folder'], io)).toBe(2);
    expect(stderrLines().join('\n')).toContain('"no-such-folder"');
  });

  it('exits 2 naming the default folder when requests/ is missing', async () => {
    const { io, stderrLines } = captureIo({ cwd: fixture.base });
    expect(await main([], io)).toBe(2);
    expect(stderrLines().join('\n')).toContain('"requests/"');
  });

  it('exits 2 when the folder is a file', async () => {
    const { io, stderrLines } = captureIo({ cwd: fixture.root });
    expect(await main(['hello.json'], io)).toBe(2);
    expect(stderrLines().join('\n')).toContain('"hello.json"');
  });

  it('exits 1 when the port is taken', async () => {
    const stop = new AbortController();
    const first = await startMain([fixture.root, '--port', '0'], { signal: stop.signal });
    const { io, stderrLines } = captureIo();
    expect(await main([fixture.root, '--port', String(first.server.port)], io)).toBe(1);
    expect(stderrLines().join('\n')).toMatch(/could not listen/);
    stop.abort();
    expect(await first.exit).toBe(0);
  });
});

describe('delegate-serve serving', () => {
  it('serves on the real ephemeral port, revalidates, lists the catalog and logs one line per request', async () => {
    const stop = new AbortController();
    const { server, exit, stderrLines } = await startMain([fixture.root, '--port', '0', '--host', '127.0.0.1'], { signal: stop.signal });
    expect(server.port).toBeGreaterThan(0);
    expect(stderrLines()[0]).toBe(`delegate-serve: serving ${fixture.root} at http://127.0.0.1:${server.port}/ (Ctrl-C to stop)`);

    const document = await fetch(`${server.url}/hello.json`);
    expect(document.status).toBe(200);
    expect(await document.text()).toBe(HELLO);
    const tag = document.headers.get('etag') as string;
    const revalidated = await fetch(`${server.url}/hello.json`, { headers: { 'if-none-match': tag } });
    expect(revalidated.status).toBe(304);
    await revalidated.arrayBuffer();
    const catalog = (await (await fetch(`${server.url}/`)).json()) as { path: string }[];
    expect(catalog.map((entry) => entry.path)).toContain('/music/producer.json');
    const listed = await fetch(`${server.url}/my%20doc.json`);
    expect(catalog.map((entry) => entry.path)).toContain('/my%20doc.json');
    expect(listed.status).toBe(200);
    await listed.arrayBuffer();

    stop.abort();
    expect(await exit).toBe(0);
    const access = stderrLines().filter((line) => !line.startsWith('delegate-serve:'));
    expect(access).toHaveLength(4);
    expect(access[0]).toMatch(/^\S+ GET \/hello\.json 200 \d+B \d+ms$/);
    expect(access[1]).toMatch(/^\S+ GET \/hello\.json 304 0B \d+ms$/);
    expect(access[2]).toMatch(/^\S+ GET \/ 200 \d+B \d+ms$/);
    expect(access[3]).toMatch(/^\S+ GET \/my%20doc\.json 200 \d+B \d+ms$/);
    expect(stderrLines().at(-1)).toBe('delegate-serve: shutting down');
    await expect(fetch(`${server.url}/hello.json`)).rejects.toThrow();
  });

  it('writes the access lines in whole-line batches, and none is lost at shutdown (SERVE-10)', async () => {
    const stop = new AbortController();
    const { server, exit, io, stderrLines } = await startMain([fixture.root, '--port', '0', '--host', '127.0.0.1'], { signal: stop.signal });
    const writes: string[] = [];
    const write = io.stderr?.write.bind(io.stderr) as (text: string) => unknown;
    (io.stderr as { write(text: string): unknown }).write = (text: string) => {
      writes.push(text);
      return write(text);
    };
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${server.url}/hello.json`).then((response) => response.text())));
    expect(answers.every((text) => text === HELLO)).toBe(true);
    stop.abort();
    expect(await exit).toBe(0);
    const access = stderrLines().filter((line) => !line.startsWith('delegate-serve:'));
    expect(access).toHaveLength(40);
    expect(stderrLines().at(-1)).toBe('delegate-serve: shutting down');
    expect(access.filter((line) => / GET \/hello\.json 200 \d+B \d+ms$/.test(line))).toHaveLength(40);
    // Whole lines per write; how many share a write depends on how the requests arrived (the
    // batching itself is pinned in test/properties/batched-log.property.test.ts).
    const batches = writes.filter((text) => text.includes(' GET /hello.json '));
    expect(batches.every((text) => text.endsWith('\n'))).toBe(true);
    expect(batches.join('').split('\n').filter(Boolean)).toHaveLength(40);
  });

  it('serves requests/ under the working folder by default', async () => {
    const base = await mkdtemp(join(tmpdir(), 'delegate-serve-cwd-'));
    try {
      await mkdir(join(base, 'requests'));
      await writeFile(join(base, 'requests', 'hello.json'), HELLO);
      const stop = new AbortController();
      const { server, exit } = await startMain(['--port', '0'], { cwd: base, signal: stop.signal });
      expect(server.root).toBe(join(base, 'requests'));
      expect(await (await fetch(`${server.url}/hello.json`)).text()).toBe(HELLO);
      stop.abort();
      expect(await exit).toBe(0);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('shuts down gracefully on SIGTERM, SIGINT and SIGHUP and removes its signal listeners', async () => {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      const before = process.listeners(signal);
      const { server, exit } = await startMain([fixture.root, '--port', '0']);
      const added = process.listeners(signal).filter((listener) => !before.includes(listener));
      expect(added).toHaveLength(1);
      expect((await fetch(`${server.url}/hello.json`)).status).toBe(200);
      // Call the listener main installed rather than emitting, so the test runner's own handlers stay out of it.
      (added[0] as (signal: NodeJS.Signals) => void)(signal);
      expect(await exit).toBe(0);
      expect(process.listeners(signal)).toEqual(before);
    }
  });
});

describe.skipIf(!existsSync(SCRIPT))('the compiled delegate-serve executable', () => {
  /** Runs the script (through `command`, e.g. a bin symlink), waits for its startup line, returns the child and URL. */
  async function launch(command: string) {
    const child = spawn(process.execPath, [command, fixture.root, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const url = await new Promise<string>((resolveUrl, reject) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr);
        if (match?.[1]) resolveUrl(match[1]);
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code} before listening: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
    return { child, url, exited, stderr: () => stderr };
  }

  it('runs when executed directly, serves, and exits 0 after SIGTERM', async () => {
    const { child, url, exited, stderr } = await launch(SCRIPT);
    expect(await (await fetch(`${url}/hello.json`)).text()).toBe(HELLO);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).toMatch(/GET \/hello\.json 200 \d+B \d+ms\n/);
  });

  it('runs through a symlink, as an npm bin link does', async () => {
    const link = join(fixture.base, 'delegate-serve-link.js');
    await symlink(SCRIPT, link);
    const { child, url, exited } = await launch(link);
    expect((await fetch(`${url}/`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
