/** Lua scripts run by their SHA1 (EVALSHA), their text sent once per connection (SCRIPT LOAD). */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * One Lua script of the queue mode. Loaded once per connection (SCRIPT LOAD, which every call made
 * meanwhile waits for) and run by its SHA1, so the text crosses the wire and is compiled by Redis
 * once rather than with every job, and a burst of a thousand jobs' calls does not each find the
 * script missing; a Redis that lost it (restarted, or flushed) is sent it again.
 */
export class RedisScript {
  private readonly sha: string;
  private readonly loads = new WeakMap<Redis, Promise<unknown>>();

  constructor(readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script on `client` with `keys` and `args`, and resolves to its reply. */
  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    await (this.loads.get(client) ?? this.load(client));
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      await this.load(client);
      return client.evalsha(this.sha, keys.length, ...keys, ...args);
    }
  }

  private load(client: Redis): Promise<unknown> {
    const loading = client.script('LOAD', this.lua);
    this.loads.set(client, loading);
    // A load that failed is tried again by the next call.
    loading.catch(() => this.loads.get(client) === loading && this.loads.delete(client));
    return loading;
  }
}
