/** One attempt at a job on a worker, as Redis keeps it: the non-idempotent calls it starts (QUEUE-31) and what its own model answers cost (QUEUE-32). */
import type { Redis } from 'ioredis';
import { abortable } from '../protocol/cancellation.js';
import { DelegateError } from '../protocol/errors.js';
import { parseJson } from '../protocol/json.js';
import type { StartedCall, StartedCallLog } from '../protocol/contracts.js';
import type { TraceEvent } from '../protocol/trace/trace.js';
import { knownTraceEvent } from '../protocol/trace/events.js';
import { isJsonObject } from '../protocol/types.js';
import { addCost, addUsage, type Usage, zeroUsage } from '../protocol/usage.js';
import { attemptUsageKey, KEPT_SECONDS, startedCallsKey } from './queue-keys.js';
import { RedisScript } from './redis-script.js';

/** How long recording a started call, or reading earlier attempts', may wait for Redis (QUEUE-9). */
const RECORD_TIMEOUT_MS = 5000;

/**
 * Appends a started call (ARGV[2]) to the list KEYS[2], kept ARGV[3] seconds, only while the job's
 * lock KEYS[1] holds this attempt's token ARGV[1] (QUEUE-31); 1 when it did.
 */
const RECORD_WHILE_LOCKED = new RedisScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1`);

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
    /** The calls earlier attempts started, by run, call id and tool. */
    private readonly earlier: ReadonlySet<string>,
    private readonly url: string,
    private readonly lock: { key: string; token: string },
  ) {}

  /**
   * Begins attempt `attempt` at the job `job` running the child run `run`: a later attempt reads the
   * calls the earlier ones recorded. A Redis that cannot give them fails the attempt (it throws),
   * since running without them could repeat an effect.
   */
  static async begin(
    client: Redis,
    where: { queueName: string; url: string },
    job: { id: string; run: string; attempt: number; lock: { key: string; token: string } },
  ): Promise<JobAttempt> {
    const lines = job.attempt > 1 ? await bounded(client.lrange(startedCallsKey(where.queueName, job.id), 0, -1)) : [];
    const earlier = new Set(lines.flatMap((line) => recordedCall(line)));
    return new JobAttempt(client, where.queueName, job.id, job.run, job.attempt, earlier, where.url, job.lock);
  }

  /** True when an earlier attempt started this call (QUEUE-31): its parameters may differ, since the model was asked again. */
  startedBefore(call: Omit<StartedCall, 'params'>): boolean {
    return this.earlier.has(callKey(call));
  }

  /**
   * Records a non-idempotent call before its Activity runs (QUEUE-31), in one step with a look at the
   * job's lock: an attempt whose job another worker took over records nothing and fails the call,
   * unrun, as it does when Redis does not take the record.
   */
  async record(call: StartedCall): Promise<void> {
    const unrun = `The call to "${call.tool}" (${call.call}) was not run: its Activity is not idempotent`;
    let recorded: unknown;
    try {
      recorded = await bounded(
        RECORD_WHILE_LOCKED.run(this.client, [this.lock.key, startedCallsKey(this.queueName, this.job)], [this.lock.token, JSON.stringify(call), KEPT_SECONDS]),
      );
    } catch (error) {
      throw new DelegateError(
        'worker_error',
        `${unrun}, and recording that it started failed on Redis at ${this.url} (${(error as Error).message}), so a worker taking the job over could run it again.`,
        { toolName: call.tool },
      );
    }
    if (recorded !== 1) {
      throw new DelegateError('worker_error', `${unrun}, and this attempt at the job lost its lock: another worker took the job over.`, {
        toolName: call.tool,
      });
    }
  }

  /** Takes one event of the attempt: each answer of the job's own run adds to what the attempt paid, kept in Redis as it goes (QUEUE-32). */
  observe(event: TraceEvent): void {
    const known = knownTraceEvent(event);
    if (known?.event !== 'model.response' || known.run !== this.run) return;
    this.usage = addAttemptUsage(this.usage, { ...known.usage, costUsd: known.costUsd });
    const key = attemptUsageKey(this.queueName, this.job);
    // Not awaited: commands on one connection keep their order, so the last write is the latest total. Sent in one write, no transaction needed.
    this.client
      .pipeline()
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

/** A call's place: its run, call id and tool. */
function callKey(call: Omit<StartedCall, 'params'>): string {
  return `${call.run}\u0000${call.call}\u0000${call.tool}`;
}

/** The place of a recorded call; nothing for a line that is no record. */
function recordedCall(line: string): string[] {
  const parsed = parseJson(line);
  if (!parsed.ok || !isJsonObject(parsed.value)) return [];
  const call = parsed.value as Partial<StartedCall>;
  if (typeof call.run !== 'string' || typeof call.call !== 'string' || typeof call.tool !== 'string') return [];
  return [callKey({ run: call.run, call: call.call, tool: call.tool })];
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
