/** The thread that keeps a worker's job locks (QUEUE-30): it renews them on an event loop of its own, so an Activity that blocks the worker's does not let them lapse. */
import { parentPort, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { connectionFor } from './redis-url.js';

/** A message from the worker: hold the lock `key` while it holds `token`, or drop it. */
export type LockKeeperMessage = { hold: string; token: string } | { drop: string };

const { url, lockMs } = workerData as { url: string; lockMs: number };
const client = new Redis({ ...connectionFor(url), maxRetriesPerRequest: 1, commandTimeout: lockMs });
// A Redis that is away is the worker's to say (QUEUE-34); here a renewal that fails is tried again at the next turn.
client.on('error', () => undefined);
client.defineCommand('keepLock', {
  numberOfKeys: 1,
  // Renewed only while the worker still holds it: a job moved on, or finished, is never locked again.
  lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0",
});
const held = new Map<string, string>();

// The worker sends the messages of one turn of its event loop together, in order.
parentPort?.on('message', (messages: LockKeeperMessage[]) => {
  for (const message of messages) {
    if ('hold' in message) held.set(message.hold, message.token);
    else held.delete(message.drop);
  }
});

setInterval(
  () => {
    if (held.size === 0) return;
    const pipeline = client.pipeline();
    for (const [key, token] of held) (pipeline as unknown as { keepLock(key: string, token: string, ms: number): void }).keepLock(key, token, lockMs);
    pipeline.exec().catch(() => undefined);
  },
  Math.max(100, Math.round(lockMs / 3)),
);
