/** How long what the queue mode writes to Redis lives (QUEUE-25, QUEUE-26): the trees' heartbeats, and lifetimes for BullMQ's own keys. */
import type { Redis } from 'ioredis';
import { aliveKey } from './queue-keys.js';

/** How long a tree's heartbeat lasts unrefreshed (`--queue-heartbeat`, QUEUE-25): 30 s; its top process refreshes it every third of that. */
export const DEFAULT_HEARTBEAT_MS = 30_000;

/** How often a worker looks at the heartbeats of the trees it runs jobs of, and renews its jobs' lifetimes (QUEUE-25, QUEUE-26): 2 s. */
export const WORKER_CHECK_MS = 2000;

/** How long a finished job (its hash, data and result) is kept (`--queue-keep`, QUEUE-26): an hour. */
export const DEFAULT_KEEP_SECONDS = 3600;

/** The longest a job may ask to be kept finished: a day (QUEUE-26). */
export const MAX_KEEP_SECONDS = 86_400;

/** Gives each existing key of KEYS a lifetime of at least ARGV[1] seconds: a key without one gets it, a longer one stays. */
const AT_LEAST_SCRIPT = `
for _, key in ipairs(KEYS) do
  local ttl = redis.call('TTL', key)
  if ttl == -1 or (ttl >= 0 and ttl < tonumber(ARGV[1])) then redis.call('EXPIRE', key, ARGV[1]) end
end
return 0`;

/** Gives each of `keys` that exists a lifetime of at least `seconds` (QUEUE-26); a key that has a longer one keeps it. */
export async function keepAtLeast(redis: Redis, keys: readonly string[], seconds: number): Promise<void> {
  if (keys.length > 0) await redis.eval(AT_LEAST_SCRIPT, keys.length, ...keys, Math.max(1, Math.round(seconds)));
}

/** Gives KEYS[1] a lifetime of ARGV[1] seconds if it exists without one (EXPIRE NX, for a Redis before 7). */
const UNLESS_SET_SCRIPT = `
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 0`;

/** Gives `key` a lifetime of `seconds` if it exists and has none: a lifetime a worker gave it stays (QUEUE-26). */
export async function keepUnlessSet(redis: Redis, key: string, seconds: number): Promise<void> {
  await redis.eval(UNLESS_SET_SCRIPT, 1, key, Math.max(1, Math.round(seconds)));
}

/**
 * The heartbeats of the run trees whose top run is in this process (QUEUE-25): while a child of a
 * tree is queued, the tree's key `delegate-run:<queue>:alive:<tree>` is set to live `ttlMs` and
 * refreshed every third of that. A process killed outright refreshes it no more, and the workers
 * end the tree's jobs once it is gone.
 */
export class TreeHeartbeats {
  private readonly held = new Map<string, { holders: number; timer: ReturnType<typeof setInterval>; first: Promise<unknown> }>();

  constructor(
    private readonly redis: Redis,
    private readonly queueName: string,
    readonly ttlMs: number,
  ) {}

  /**
   * Keeps the tree alive until the function it resolves to is called, once per holder; resolves
   * once the key is set (rejects when Redis does not set it). The tree's heartbeat stops with its
   * last holder and the key then lapses on its own.
   */
  async hold(tree: string): Promise<() => void> {
    let entry = this.held.get(tree);
    if (!entry) {
      const timer = setInterval(() => void this.beat(tree).catch(() => undefined), Math.max(100, Math.floor(this.ttlMs / 3)));
      // The heartbeat never keeps the process alive by itself.
      timer.unref();
      entry = { holders: 0, timer, first: this.beat(tree) };
      this.held.set(tree, entry);
    }
    const held = entry;
    held.holders += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.holders -= 1;
      if (held.holders === 0 && this.held.get(tree) === held) {
        clearInterval(held.timer);
        this.held.delete(tree);
      }
    };
    try {
      await held.first;
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Stops every heartbeat and deletes their keys: the process says goodbye. */
  async close(): Promise<void> {
    const trees = [...this.held.keys()];
    for (const entry of this.held.values()) clearInterval(entry.timer);
    this.held.clear();
    if (trees.length > 0) await this.redis.del(...trees.map((tree) => aliveKey(this.queueName, tree))).catch(() => undefined);
  }

  private beat(tree: string): Promise<unknown> {
    return this.redis.set(aliveKey(this.queueName, tree), '1', 'PX', this.ttlMs);
  }
}
