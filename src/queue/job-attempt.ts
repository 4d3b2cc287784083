/** One attempt at a job on a worker, as Redis keeps it: the non-idempotent calls it starts (QUEUE-31) and what its own model answers cost (QUEUE-32). */
import type { Redis } from 'ioredis';
import { abortable } from '../protocol/cancellation.js';
import { DelegateError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import type { StartedCall, StartedCallLog } from '../protocol/remote-child.js';
import type { TraceEvent } from '../protocol/trace.js';
import { knownTraceEvent } from '../protocol/trace-events.js';
import { isJsonObject } from '../protocol/types.js';
import { addCost, addUsage, type Usage, zeroUsage } from '../protocol/usage.js';
import { attemptUsageKey, KEPT_SECONDS, startedCallsKey } from './queue-keys.js';

/** How long recording a started call, or reading earlier attempts', may wait for Redis (QUEUE-9). */
const RECORD_TIMEOUT_MS = 5000;

/** What an attempt paid for its own model answers: tokens and dollars (`null` when a price is unknown). */
export type AttemptUsage = Usage & { costUsd: number | null };

/** The usage of no answers. */
export function noAttemptUsage(): AttemptUsage {
  return { ...zeroUsage(), costUsd: 0 };
}

/** Adds two attempts' usage. */
export function addAttemptUsage(a: AttemptUsage, b: AttemptUsage): AttemptUsage {
  return { ...addUsage(a, b), costUsd: addCost(a.costUsd, b.costUsd) };
}

/**
 * One attempt at a job (QUEUE-8): the record of the non-idempotent calls it starts, read by the
 * attempt that takes the job over (QUEUE-31), and of its own answers' usage as it goes, read by the
 * caller when the job's result arrives (QUEUE-32).
 */
export class JobAttempt implements StartedCallLog {
  private usage = noAttemptUsage();

  private constructor(
    private readonly client: Redis,
    private readonly queueName: string,
    private readonly job: string,
    private readonly run: string,
    private readonly attempt: number,
    readonly earlier: readonly TraceEvent[],
    private readonly url: string,
  ) {}

  /**
   * Begins attempt `attempt` at the job `job` running the child run `run`: a later attempt reads the
   * calls the earlier ones recorded. A Redis that cannot give them fails the attempt (it throws),
   * since running without them could repeat an effect.
   */
  static async begin(client: Redis, where: { queueName: string; url: string }, job: string, run: string, attempt: number): Promise<JobAttempt> {
    const lines = attempt > 1 ? await bounded(client.lrange(startedCallsKey(where.queueName, job), 0, -1)) : [];
    const earlier = lines.flatMap((line) => startedEvent(line));
    return new JobAttempt(client, where.queueName, job, run, attempt, earlier, where.url);
  }

  /** Records a non-idempotent call before its Activity runs (QUEUE-31); a record Redis does not take fails the call, unrun. */
  async record(call: StartedCall): Promise<void> {
    const key = startedCallsKey(this.queueName, this.job);
    try {
      await bounded(this.client.multi().rpush(key, JSON.stringify(call)).expire(key, KEPT_SECONDS).exec());
    } catch (error) {
      throw new DelegateError(
        'worker_error',
        `The call to "${call.tool}" (${call.call}) was not run: its Activity is not idempotent, and recording that it started failed on Redis at ${this.url} (${(error as Error).message}), so a worker taking the job over could run it again.`,
        { toolName: call.tool },
      );
    }
  }

  /** Takes one event of the attempt: each answer of the job's own run adds to what the attempt paid, kept in Redis as it goes (QUEUE-32). */
  observe(event: TraceEvent): void {
    const known = knownTraceEvent(event);
    if (known?.event !== 'model.response' || known.run !== this.run) return;
    this.usage = addAttemptUsage(this.usage, { ...known.usage, costUsd: known.costUsd });
    const key = attemptUsageKey(this.queueName, this.job);
    // Not awaited: commands on one connection keep their order, so the last write is the latest total.
    this.client
      .multi()
      .hset(key, String(this.attempt), JSON.stringify(this.usage))
      .expire(key, KEPT_SECONDS)
      .exec()
      .catch(() => undefined);
  }
}

/** `work` on Redis, or a failure once Redis has not answered within 5 s, as the queue's other commands (QUEUE-9). */
function bounded<T>(work: Promise<T>): Promise<T> {
  return abortable(work, AbortSignal.timeout(RECORD_TIMEOUT_MS), () => new Error(`Redis did not answer within ${RECORD_TIMEOUT_MS / 1000} s.`));
}

/** A recorded call as the `call.started` event a resumed journal holds (JOURNAL-5); nothing for a line that is no record. */
function startedEvent(line: string): TraceEvent[] {
  const parsed = parseJson(line);
  if (!parsed.ok || !isJsonObject(parsed.value)) return [];
  const call = parsed.value as Partial<StartedCall>;
  if (typeof call.run !== 'string' || typeof call.call !== 'string') return [];
  return [{ ts: '', event: 'call.started', run: call.run, parent: null, depth: 0, call: call.call, tool: call.tool ?? '', params: call.params ?? {} }];
}

/** What the attempts at a job before `before` paid (all of them when `before` is undefined), by the hash QUEUE-32 keeps; `undefined` when none did. */
export async function earlierAttempts(
  client: Redis,
  queueName: string,
  job: string,
  before: number | undefined,
): Promise<{ attempts: number[]; usage: AttemptUsage } | undefined> {
  const recorded = await client.hgetall(attemptUsageKey(queueName, job));
  const attempts: number[] = [];
  let usage = noAttemptUsage();
  for (const [field, json] of Object.entries(recorded)) {
    const attempt = Number(field);
    if (!Number.isSafeInteger(attempt) || (before !== undefined && attempt >= before)) continue;
    const parsed = parseJson(json);
    if (!parsed.ok || !isJsonObject(parsed.value)) continue;
    attempts.push(attempt);
    usage = addAttemptUsage(usage, { ...noAttemptUsage(), ...(parsed.value as Partial<AttemptUsage>) });
  }
  return attempts.length === 0 ? undefined : { attempts: attempts.sort((a, b) => a - b), usage };
}
