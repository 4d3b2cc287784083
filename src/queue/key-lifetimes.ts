/** How long what the queue mode writes to Redis lives (QUEUE-25, QUEUE-26): the trees' heartbeats, and lifetimes for BullMQ's own keys. */
import type { Redis } from 'ioredis';
import { aliveKey, KEPT_SECONDS, queueWideKeys } from './queue-keys.js';
import { RedisScript } from './redis-script.js';

/** How long a tree's heartbeat lasts unrefreshed (`--queue-heartbeat`, QUEUE-25): 30 s; its top process refreshes it every third of that. */
export const DEFAULT_HEARTBEAT_MS = 30_000;

/** How often a worker looks at the heartbeats of the trees it runs jobs of, and renews its jobs' lifetimes (QUEUE-25, QUEUE-26): 2 s. */
export const WORKER_CHECK_MS = 2000;

/** How long a finished job (its hash, data and result) is kept (`--queue-keep`, QUEUE-26): an hour. */
export const DEFAULT_KEEP_SECONDS = 3600;

/** The longest a job may ask to be kept finished: a day (QUEUE-26). */
export const MAX_KEEP_SECONDS = 86_400;

/** How often one process refreshes the lifetimes of BullMQ's keys of the queue at most (QUEUE-26): every 5 s. */
export const QUEUE_KEYS_REFRESH_MS = 5000;

/** Gives each existing key of KEYS a lifetime of at least ARGV[1] seconds: a key without one gets it, a longer one stays. */
const AT_LEAST_SCRIPT = new RedisScript(`
for _, key in ipairs(KEYS) do
  local ttl = redis.call('TTL', key)
  if ttl == -1 or (ttl >= 0 and ttl < tonumber(ARGV[1])) then redis.call('EXPIRE', key, ARGV[1]) end
end
return 0`);

/** Gives each of `keys` that exists a lifetime of at least `seconds` (QUEUE-26); a key that has a longer one keeps it. */
export async function keepAtLeast(redis: Redis, keys: readonly string[], seconds: number): Promise<void> {
  if (keys.length > 0) await AT_LEAST_SCRIPT.run(redis, keys, [Math.max(1, Math.round(seconds))]);
}

/** Gives KEYS[1] a lifetime of ARGV[1] seconds if it exists without one (EXPIRE NX, for a Redis before 7). */
const UNLESS_SET_SCRIPT = new RedisScript(`
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 0`);

/** Gives `key` a lifetime of `seconds` if it exists and has none: a lifetime a worker gave it stays (QUEUE-26). */
export async function keepUnlessSet(redis: Redis, key: string, seconds: number): Promise<void> {
  await UNLESS_SET_SCRIPT.run(redis, [key], [Math.max(1, Math.round(seconds))]);
}

/**
 * The lifetimes of BullMQ's keys of the queue as one process keeps them (QUEUE-26): refreshed when
 * the process adds a job or one of its jobs ends, but at most every `intervalMs`. A refresh asked for
 * sooner is made when that time is up, or when the process closes, so a key BullMQ created meanwhile
 * (a list emptied and written anew) still gets its lifetime. Each refresh gives the keys a day and
 * `intervalMs`, so they live at least a day after the last job added or ended, as when each job
 * refreshed them; one refresh per interval instead of one per job keeps a wide fan-out from paying
 * a script over every queue-wide key twice per delegation.
 */
export class QueueKeyLifetimes {
  private last = Number.NEGATIVE_INFINITY;
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly queueName: string,
    private readonly intervalMs = QUEUE_KEYS_REFRESH_MS,
  ) {}

  /** Says a job was added or ended: the keys are refreshed now, or at the end of the interval since the last refresh. */
  touched(): void {
    if (this.pending !== undefined) return;
    const wait = this.last + this.intervalMs - Date.now();
    if (wait <= 0) {
      void this.refresh();
      return;
    }
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.refresh();
    }, wait);
    // The refresh still due is made by close; it never keeps the process alive by itself.
    this.pending.unref();
  }

  /** Refreshes the keys at once; a Redis that does not answer is left as it is (the next refresh tries again). */
  refresh(): Promise<void> {
    this.last = Date.now();
    return keepAtLeast(this.redis, queueWideKeys(this.queueName), KEPT_SECONDS + Math.ceil(this.intervalMs / 1000)).catch(() => undefined);
  }

  /** Makes the refresh still due, if one is. */
  async close(): Promise<void> {
    if (this.pending === undefined) return;
    clearTimeout(this.pending);
    this.pending = undefined;
    await this.refresh();
  }
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
