// The memory of `delegate-mcp --http` under hostile clients (MCP-15, MCP-16), run by hand: its RSS after sessionless requests answered 400 and after sessions opened and abandoned; a reading, never a test.
// node bench/mcp-sessions.js [--sessionless 10000] [--sessions 2000] [--rounds 2] [-- extra delegate-mcp options, e.g. --session-idle 1]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { sessionless: { type: 'string', default: '10000' }, sessions: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '2' } },
});
const SESSIONLESS = Number(values.sessionless);
const SESSIONS = Number(values.sessions);
const ROUNDS = Number(values.rounds);
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Starts delegate-mcp --http on the repository's requests/ and waits for the URL it says on stderr. */
async function startServer(extra) {
  const child = spawn(process.execPath, [resolve(here, '..', 'dist/cli/mcp.js'), resolve(here, '..', 'requests'), '--http', '0', ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr.setEncoding('utf8');
  while (!/serving at (http:\/\/127\.0\.0\.1:\d+)/.test(text)) {
    const [chunk] = await once(child.stderr, 'data');
    text += chunk;
  }
  child.stderr.resume();
  const url = /serving at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)[1];
  return { child, url };
}

/** The process's resident set in MB, as Linux reports it. */
function rssMb(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return Math.round(kb / 1024);
}

/** Sends `total` POSTs of `body(index)` to /mcp, 20 at a time; counts the answers by status. */
async function post(url, total, body) {
  const pool = new Pool(url, { connections: 20 });
  const statuses = {};
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const index = next++;
      const { statusCode, body: answer } = await pool.request({ path: '/mcp', method: 'POST', headers: HEADERS, body: JSON.stringify(body(index)) });
      await answer.dump();
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  await pool.close();
  return statuses;
}

const listTools = (index) => ({ jsonrpc: '2.0', id: index, method: 'tools/list' });
const initialize = (index) => ({
  jsonrpc: '2.0',
  id: index,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abandoning client', version: '1' } },
});

const server = await startServer(positionals);
const settle = () => new Promise((done) => setTimeout(done, 1000));
try {
  await settle();
  process.stdout.write(`delegate-mcp ${positionals.join(' ')}: at start ${rssMb(server.child.pid)} MB\n`);
  for (let round = 1; round <= ROUNDS; round++) {
    const refused = await post(server.url, SESSIONLESS, listTools);
    await settle();
    process.stdout.write(`round ${round}: after ${SESSIONLESS} sessionless requests ${JSON.stringify(refused)}: ${rssMb(server.child.pid)} MB\n`);
    const opened = await post(server.url, SESSIONS, initialize);
    await settle();
    process.stdout.write(`round ${round}: after ${SESSIONS} abandoned sessions ${JSON.stringify(opened)}: ${rssMb(server.child.pid)} MB\n`);
  }
} finally {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}
