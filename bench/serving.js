// The serving figure: delegate-serve against Node's minimal static server on the same files, 50 connections, a bounded number of requests, both in processes of their own.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const FOLDER = resolve(here, '..', 'requests');
const PATHS = ['/translator/translator.json', '/translator/localize.json', '/summarizer/summarizer.json', '/weather/forecast.json'];

/** Starts a server process and waits for the line holding its URL on `stream` ('stdout' or 'stderr'). */
async function startServer(args, stream) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const source = child[stream];
  source.setEncoding('utf8');
  while (!/http:\/\/127\.0\.0\.1:\d+/.test(text)) {
    const [chunk] = await once(source, 'data');
    text += chunk;
  }
  // The access log keeps coming: drained, so the server never waits on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  const url = /http:\/\/127\.0\.0\.1:\d+/.exec(text)[0];
  return {
    url,
    close: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Requests per second for `total` GETs over 50 connections, 50 in flight; `headers` of each request from its path. */
async function requestsPerSecond(url, total, headersOf = () => ({})) {
  const pool = new Pool(url, { connections: 50, pipelining: 1 });
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const path = PATHS[next++ % PATHS.length];
      const { statusCode, body } = await pool.request({ path, method: 'GET', headers: headersOf(path) });
      await body.dump();
      if (statusCode !== 200 && statusCode !== 304) throw new Error(`${path} answered ${statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker)); // warm-up round
  next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 50 }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return total / seconds;
}

/** delegate-serve's requests per second (plain GETs and ETag hits) and Node's static server's, on the same files. */
export async function servingFigures(total = 4000) {
  const ours = await startServer([resolve(here, '..', 'dist/cli/serve.js'), FOLDER, '--port', '0'], 'stderr');
  const baseline = await startServer([resolve(here, 'static-server.js'), FOLDER], 'stdout');
  try {
    const tags = {};
    for (const path of PATHS) tags[path] = (await fetch(`${ours.url}${path}`)).headers.get('etag');
    const staticRps = await requestsPerSecond(baseline.url, total);
    const oursRps = await requestsPerSecond(ours.url, total);
    const hitsRps = await requestsPerSecond(ours.url, total, (path) => ({ 'if-none-match': tags[path] }));
    return { staticRps, oursRps, hitsRps };
  } finally {
    await ours.close();
    await baseline.close();
  }
}
