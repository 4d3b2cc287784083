/** A run tree's run bound counted in Redis (QUEUE-20): every process of the tree admits its children against the tree's one count. */
import type { Redis } from 'ioredis';
import { coalescePerTurn } from '../server/coalesce-per-turn.js';
import { DelegateError } from '../protocol/errors.js';
import { TreeBounds, type TreeLimits } from '../protocol/run/tree-bounds.js';
import { KEPT_SECONDS } from './queue-keys.js';
import { RedisScript } from './redis-script.js';

/**
 * Admits one run against the tree's count in one step, so two processes can never both take the
 * last run: the hash's `runs` (absent: 1, the top run) grows by one while it is below the limit;
 * at the limit `refused` grows instead. Answers whether it admitted, and the tree's counts after.
 */
const ADMIT_SCRIPT = new RedisScript(`
local runs = tonumber(redis.call('HGET', KEYS[1], 'runs') or '1')
local refused = tonumber(redis.call('HGET', KEYS[1], 'refused') or '0')
local admitted = 0
if runs < tonumber(ARGV[1]) then
  runs = runs + 1
  admitted = 1
  redis.call('HSET', KEYS[1], 'runs', runs)
else
  refused = refused + 1
  redis.call('HSET', KEYS[1], 'refused', refused)
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {admitted, runs, refused}
`);

/**
 * TreeBounds whose run count is the tree's across processes: each admission asks Redis, and the
 * counts Redis answers with (runs started, runs refused) become this process's view, so a tree
 * spread over workers starts at most `maxRuns` runs in all, and a process learns of a refusal
 * elsewhere no later than its own next admission or {@link sync}.
 */
export class RedisTreeBounds extends TreeBounds {
  /** The tree's counts, read once per turn of the event loop however many syncs asked in it: a burst of children's results costs one read. */
  private readonly counts = coalescePerTurn(
    (key: string) => key,
    (keys) => keys.map((key) => this.client.hmget(key, 'runs', 'refused').catch(() => [null, null])),
  );

  constructor(
    limits: TreeLimits,
    private readonly client: Redis,
    private readonly key: string,
    private readonly url: string,
  ) {
    super(limits);
  }

  /** Starts the tree's count afresh at its top run (a resumed tree counts again, as in process, DEL-19). */
  start(): void {
    // Sent before any admission on the same connection, so Redis runs it first.
    this.client.del(this.key).catch(() => undefined);
  }

  /** Admits one more run against the tree's count; rejects with the in-process refusal, `budget_exceeded`, past `maxRuns`. */
  override admit(what: string): Promise<void> {
    return ADMIT_SCRIPT.run(this.client, [this.key], [this.limits.maxRuns, KEPT_SECONDS]).then(
      (reply) => {
        const [admitted, runs, refused] = reply as [number, number, number];
        this.adopt(runs, refused);
        if (admitted !== 1) {
          // The tree's count stands at the limit: refused exactly as in process, with its numbers.
          throw this.refusal(what);
        }
      },
      (error: Error) => {
        throw new DelegateError('worker_error', `Cannot count ${what} against the run tree's runs on ${this.url}: ${error.message}`, {});
      },
    );
  }

  /** Reads the tree's counts from Redis (a worker does before it runs a job, a parent when a child's result arrives). */
  async sync(): Promise<void> {
    const [runs, refused] = await this.counts(this.key);
    this.adopt(Number(runs ?? 1), Number(refused ?? 0));
  }

  private adopt(runs: number, refused: number): void {
    if (Number.isFinite(runs)) this.runs = Math.max(this.runs, runs);
    if (Number.isFinite(refused)) this.refused = Math.max(this.refused, refused);
  }
}
