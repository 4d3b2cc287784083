/** The `--queue` URL: a `redis://` or `rediss://` address, as BullMQ's connection options (QUEUE-4). */
import type { RedisOptions } from 'ioredis';
import { UsageError } from '../protocol/errors.js';

/** The default name of the queue delegations go on (`--queue-name`, QUEUE-4). */
export const DEFAULT_QUEUE_NAME = 'delegate-run';

/**
 * BullMQ's connection options for a Redis URL (`redis://[user:password@]host[:port][/db]`); throws a
 * UsageError naming the flag for anything else. Connections fail fast instead of waiting for Redis
 * to come back, so a lost Redis is an error, never a hang (QUEUE-9).
 */
export function connectionFor(url: string, flag = '--queue'): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${flag} ${url}: expected a Redis URL such as redis://127.0.0.1:6379/0.`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new UsageError(`${flag} ${url}: expected a redis:// or rediss:// URL, got the scheme "${parsed.protocol.slice(0, -1)}".`);
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isSafeInteger(db) || db < 0) throw new UsageError(`${flag} ${url}: the database "${parsed.pathname.slice(1)}" is not a whole number.`);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db,
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    connectTimeout: 2000,
    // Reconnect a few times, then give up: callers see the failure instead of waiting forever.
    retryStrategy: (times: number) => (times > 5 ? null : Math.min(times * 200, 1000)),
  };
}
