/** A run tree's budget meter shared through Redis (QUEUE-6): every process of the tree adds to the same totals and checks against them. */
import type { Redis } from 'ioredis';
import { coalescePerTurn } from '../server/coalesce-per-turn.js';
import { BudgetMeter, type Budget } from '../protocol/budget.js';
import type { Usage } from '../protocol/usage.js';
import { KEPT_SECONDS } from './queue-keys.js';

/**
 * A BudgetMeter whose totals are the tree's across processes: each answer's usage is added here at
 * once and to Redis, and the tree's totals Redis answers with replace this process's view, so a
 * process sees every other's spending no later than its own next answer.
 */
export class RedisBudgetMeter extends BudgetMeter {
  /** The tree's totals, read once per turn of the event loop however many syncs asked in it: a burst of children's results costs one read. */
  private readonly totals = coalescePerTurn(
    (key: string) => key,
    (keys) => keys.map((key) => this.client.hmget(key, 'tokens', 'costUsd').catch(() => [null, null])),
  );

  constructor(
    limit: Budget,
    private readonly client: Redis,
    private readonly key: string,
  ) {
    super(limit);
  }

  /** Adds one answer's usage here and to the tree's totals in Redis. */
  override add(usage: Usage, costUsd: number | null): void {
    super.add(usage, costUsd);
    const tokens = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    // One write; the replies are the totals after this answer's increments, which commands on one connection keep in order.
    this.client
      .pipeline()
      .hincrby(this.key, 'tokens', tokens)
      .hincrbyfloat(this.key, 'costUsd', costUsd ?? 0)
      .expire(this.key, KEPT_SECONDS)
      .exec()
      .then((replies) => {
        const [tokensReply, costReply] = replies ?? [];
        this.adopt(tokensReply?.[1], costReply?.[1]);
      })
      .catch(() => undefined);
  }

  /** Reads the tree's totals from Redis (a worker does before it runs a job, a parent when a child's result arrives). */
  async sync(): Promise<void> {
    const [tokens, costUsd] = await this.totals(this.key);
    this.adopt(tokens, costUsd);
  }

  private adopt(tokens: unknown, costUsd: unknown): void {
    const spentTokens = Number(tokens);
    const spentUsd = Number(costUsd);
    if (Number.isFinite(spentTokens)) this.tokens = Math.max(this.tokens, spentTokens);
    if (Number.isFinite(spentUsd)) this.costUsd = Math.max(this.costUsd, spentUsd);
  }
}
