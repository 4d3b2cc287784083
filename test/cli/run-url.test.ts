import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVE_BIN, offlineEnv, readTrace, runCli, tempDir } from '../helpers/cli.js';

const input = '{"brief":"a sad ballad","ambience":"rain on a window"}';
const cassette = 'replay:requests/music/producer.cassette.json';

describe('URL delegates, end to end', () => {
  let server: Server;
  let base = '';
  const log: string[] = [];

  beforeAll(async () => {
    // A loopback server that serves requests/music with ETags and counts what it answers.
    server = createServer((request, response) => {
      const name = (request.url ?? '').replace(/^\//, '');
      let body: Buffer;
      try {
        body = readFileSync(resolve('test/fixtures/twice', `${name.replace(/\.json$/, '').replace(/[^a-z-]/g, '')}.json`));
      } catch {
        response.writeHead(404).end();
        log.push(`404 ${name}`);
        return;
      }
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
      if (request.headers['if-none-match'] === etag) {
        response.writeHead(304, { etag }).end();
        log.push(`304 ${name}`);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', etag }).end(body);
      log.push(`200 ${name}`);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('downloads each document once per run and revalidates it with 304 afterwards', async () => {
    log.length = 0;
    const result = await runCli([`${base}/parent.json`, '--model', 'replay:test/fixtures/twice/parent.cassette.json', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: 'two' });
    expect(log).toEqual(['200 parent.json', '200 helper.json', '304 helper.json']);
  });
});

describe('composition across hosts through delegate-serve', () => {
  it('runs a served producer whose relative delegates resolve against its URL', async () => {
    await withServe('requests', async (url, log) => {
      const trace = join(tempDir(), 'trace.jsonl');
      const result = await runCli([`${url}/music/producer.json`, '--input', input, '--model', cassette, '--trace', trace, '--json']);
      expect(result.code).toBe(0);
      expect(
        readTrace(trace)
          .filter((event) => event.event === 'delegate.started')
          .map((event) => event.delegate),
      ).toEqual(expect.arrayContaining([`${url}/music/composer.json`, `${url}/music/sound-designer.json`]));
      // Each document is downloaded once; the sound designer, wanted twice at nearly the same
      // moment, is either shared in flight or revalidated with a 304.
      const lines = log()
        .split('\n')
        .filter((line) => / \/music\//.test(line));
      for (const name of ['producer', 'composer', 'sound-designer']) {
        expect(lines.filter((line) => line.includes(`/music/${name}.json 200`))).toHaveLength(1);
      }
      expect(lines.filter((line) => / 304 /.test(line)).every((line) => line.includes('/music/sound-designer.json'))).toBe(true);
    });
  });
});

describe('revalidation through delegate-serve', () => {
  it('logs one download per document and a 304 for each later load', async () => {
    await withServe('test/fixtures', async (url, log) => {
      const result = await runCli([`${url}/twice/parent.json`, '--model', 'replay:test/fixtures/twice/parent.cassette.json', '--json']);
      expect(result.code).toBe(0);
      const lines = log()
        .split('\n')
        .filter((line) => line.includes(' /twice/'))
        .map((line) => line.replace(/^\S+ GET (\S+) (\d+) .*$/, '$2 $1'));
      expect(lines).toEqual(['200 /twice/parent.json', '200 /twice/helper.json', '304 /twice/helper.json']);
    });
  });
});

/** Runs `work` against `delegate-serve <folder>` on an ephemeral port; `log()` is its stderr so far. */
async function withServe(folder: string, work: (url: string, log: () => string) => Promise<void>): Promise<void> {
  const serve = spawn(process.execPath, [SERVE_BIN, folder, '--port', '0'], { env: offlineEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  serve.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    await work(await waitForUrl(() => stderr), () => stderr);
  } finally {
    serve.kill('SIGTERM');
    await new Promise((done) => serve.on('close', done));
  }
}

async function waitForUrl(read: () => string): Promise<string> {
  const started = Date.now();
  for (;;) {
    const match = /http:\/\/127\.0\.0\.1:\d+/.exec(read());
    if (match) return match[0];
    if (Date.now() - started > 10_000) throw new Error(`delegate-serve did not start: ${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('trust of URL documents', () => {
  it('refuses local Activities to an untrusted host and allows them with --trust-host', async () => {
    await withServe('test/fixtures', async (url) => {
      const common = [
        `${url}/trust/remote.json`,
        '--activities',
        'test/fixtures/trust/activities.mjs',
        '--model',
        'replay:test/fixtures/trust/remote.cassette.json',
        '--json',
      ];
      const untrusted = await runCli(common);
      expect(JSON.parse(untrusted.stdout)).toMatchObject({ ok: true, output: 'forbidden' });
      const trusted = await runCli([...common, '--trust-host', new URL(url).host]);
      expect(JSON.parse(trusted.stdout)).toMatchObject({ ok: true, output: 'ran' });
    });
  });
});
