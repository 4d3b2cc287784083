// Starts and stops delegate-worker processes for the queue tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { offlineEnv } from './cli.js';

/** The built worker binary. */
export const WORKER_BIN = resolve('dist/bundle/worker.js');

/** A running worker process and what it wrote to stderr. */
export interface WorkerProcess {
  child: ChildProcess;
  stderr(): string;
}

/** Starts one worker on the queue at `url`, offline but for the variables in `env`; resolves once it says it takes jobs. */
export async function startWorker(url: string, extra: string[] = [], env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER_BIN, '--queue', url, '--root', '.', ...extra], { env: offlineEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`delegate-worker did not start within 15 s: ${stderr}`)), 15_000);
    const check = () => {
      if (stderr.includes('taking jobs')) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stderr?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`delegate-worker exited with ${code}: ${stderr}`));
    });
  });
  return { child, stderr: () => stderr };
}

/** Starts `count` workers on the queue at `url`, offline but for the variables in `env`. */
export function startWorkers(url: string, count: number, extra: string[] = [], env: Record<string, string> = {}): Promise<WorkerProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startWorker(url, extra, env)));
}

/** Stops workers (SIGTERM, then SIGKILL after 5 s) and waits for them to exit. */
export async function stopWorkers(workers: readonly WorkerProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((done) => {
          if (worker.child.exitCode !== null || worker.child.signalCode !== null) return done();
          const force = setTimeout(() => worker.child.kill('SIGKILL'), 5000);
          worker.child.once('exit', () => {
            clearTimeout(force);
            done();
          });
          worker.child.kill('SIGTERM');
        }),
    ),
  );
}

/** The flags a worker needs to run the jobs of a tree whose Requests are in `folder`: that folder as its root, and the cassette its jobs ask for (QUEUE-23). */
export function folderFlags(folder: string, cassette = 'boss.cassette.json'): string[] {
  return ['--root', folder, '--model', `replay:${join(folder, cassette)}`];
}
