// Starts a throwaway redis-server on a free loopback port, persistence off, for the queue tests; stops it after.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The redis-server executable tests start (Debian's redis-server package). */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** True when redis-server can be started here. */
export const redisAvailable = spawnSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' }).status === 0;

/** Why the queue tests were skipped, for their suite names. */
export const REDIS_SKIP_REASON = `skipped: no ${REDIS_SERVER} on PATH (apt-get install redis-server; .ci/run installs it)`;

/** A running redis-server: its URL, and how to stop it. */
export interface TestRedis {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** True when something accepts a TCP connection on `port` of 127.0.0.1 (a redis-server, or any server a test waits for). */
export async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts redis-server on a free port of 127.0.0.1 with no persistence; resolves once it accepts connections. */
export async function startRedis(port?: number): Promise<TestRedis> {
  const chosen = port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'delegate-redis-'));
  const child = spawn(REDIS_SERVER, ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const started = Date.now();
  while (!(await accepting(chosen))) {
    if (child.exitCode !== null || Date.now() - started > 10_000) throw new Error(`redis-server did not start on port ${chosen}`);
    await new Promise((wait) => setTimeout(wait, 20));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `redis://127.0.0.1:${chosen}/0`,
    port: chosen,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
