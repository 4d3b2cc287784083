/** The parent side of the queue (QUEUE-1): every child run becomes a BullMQ job, and the caller waits for its result. */
import { type ConnectionOptions, type Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { abortable, onAbort } from '../protocol/cancellation.js';
import { DelegateError, UsageError, cancelled, type ProtocolError } from '../protocol/errors.js';
import type { RemoteChild, RemoteChildHooks, RemoteChildRunner, RunResult } from '../protocol/contracts.js';
import { parseJson } from '../protocol/json.js';
import { RunTrace } from '../protocol/trace/trace.js';
import { addCost, addUsage, type UsageSummary } from '../protocol/usage.js';
import type { Budget } from '../protocol/budget.js';
import type { TreeLimits } from '../protocol/run/tree-bounds.js';
import {
  budgetKey,
  cancelChannel,
  cancelledKey,
  cassetteClaimsKey,
  jobCancelChannel,
  jobCancelledKey,
  jobHashKey,
  jobIdOf,
  runsKey,
  traceStreamKey,
  treeKey,
  treeOf,
} from './queue-keys.js';
import { RedisCassetteClaims } from './redis-cassette-claims.js';
import { RedisBudgetMeter } from './redis-budget-meter.js';
import { RedisTreeBounds } from './redis-tree-bounds.js';
import { connectionFor, DEFAULT_QUEUE_NAME } from './redis-url.js';
import { failedResult, resultFromJson, type RunResultJson } from './run-result-json.js';
import { TraceStreamReader } from './trace-relay.js';
import { JobWaits } from './job-waits.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_KEEP_SECONDS, keepUnlessSet, MAX_KEEP_SECONDS, QueueKeyLifetimes, TreeHeartbeats } from './key-lifetimes.js';
import { jobOf } from './queue-job.js';
import { earlierAttempts } from './job-attempt.js';
import { type ErrorEmitter, RedisOutage } from './redis-outage.js';

/** How long a child's job may take before its caller gives up on it (QUEUE-10): one hour. */
export const DEFAULT_JOB_TIMEOUT_MS = 3_600_000;

/** How long a cancelled child's caller waits for its worker to end it before it returns cancelled (QUEUE-7). */
const CANCEL_GRACE_MS = 2000;

/** How long one command of the runner's own may wait for Redis before it fails (QUEUE-9). */
const COMMAND_TIMEOUT_MS = 5000;

/** How long Redis may not answer at start before the queue is refused (QUEUE-9). */
const CONNECT_TIMEOUT_MS = 3000;

/** How often a caller looks whether the jobs it waits for are still in Redis (QUEUE-33); it looks too whenever its connection is ready again. */
export const JOB_CHECK_INTERVAL_MS = 10_000;

/** Options of {@link QueueChildRunner.connect}. */
export interface QueueChildRunnerOptions {
  /** The Redis URL (`--queue`). */
  url: string;
  /** The queue's name (`--queue-name`, default `delegate-run`). */
  queueName?: string;
  /** How long one child's job may take (default one hour, QUEUE-10). */
  timeoutMs?: number;
  /**
   * True in the process running a tree's top run: it reads the tree's remote events and re-emits
   * them into the tree's tracer (QUEUE-5). A worker's runner does not, since its events already go
   * to the tree's stream.
   */
  relay: boolean;
  /** The key jobs are signed with (`DELEGATE_QUEUE_KEY`, QUEUE-24); unsigned without one. */
  key?: string;
  /** How long a tree's heartbeat lasts unrefreshed (`--queue-heartbeat`, default 30 s, QUEUE-25); only the top process (`relay`) beats. */
  heartbeatMs?: number;
  /** How long a finished job is kept (`--queue-keep`, default an hour, at most a day, QUEUE-26). */
  keepSeconds?: number;
  /** Says a line to the operator (the CLI: stderr): a Redis outage, once (QUEUE-34). */
  say?: (line: string) => void;
}

/** What a job's return value holds: the child's result and the id of its last trace event in the tree's stream. */
export interface JobReturn {
  result: RunResultJson;
  trace: string | null;
  /** Which attempt at the job the result is (QUEUE-8): the caller adds what the earlier ones paid (QUEUE-32). */
  attempt?: number;
}

/** The waits of a process for its jobs (QUEUE-10): the queue's events, once read from, and the waits listening to them. */
interface QueueWaits {
  events: QueueEvents;
  ready: Promise<JobWaits>;
  made?: JobWaits;
}

/** Sends child runs to a BullMQ queue on Redis and waits for their results (QUEUE-1, QUEUE-3). */
export class QueueChildRunner implements RemoteChildRunner {
  private readonly lost: Promise<string>;
  private readonly meters = new Map<string, RedisBudgetMeter>();
  private readonly counts = new Map<string, RedisTreeBounds>();
  /** The cassette claims of each tree session (QUEUE-17): one per tree, so entries known taken are not asked again. */
  private readonly claims = new Map<string, RedisCassetteClaims>();
  /** The resumed trees whose earlier sessions this process has ended (QUEUE-14), by tree session. */
  private readonly superseded = new Map<string, Promise<void>>();
  /** The jobs waited for here, by id, each with the way to fail its wait when the job is gone from Redis (QUEUE-33). */
  private readonly waiting = new Map<string, (message: string) => void>();
  private readonly checker: ReturnType<typeof setInterval>;
  /** The waits for this process's jobs and the queue's events they listen to, once a job was first waited for. */
  private waits: QueueWaits | undefined;
  /** The lifetimes of BullMQ's keys of the queue, refreshed at most every few seconds (QUEUE-26). */
  readonly queueKeys: QueueKeyLifetimes;

  private constructor(
    readonly queueName: string,
    private readonly url: string,
    private readonly queue: Queue,
    private readonly command: Redis,
    private readonly reader: TraceStreamReader | undefined,
    private readonly timeoutMs: number,
    private readonly setting: { key: string | undefined; keepSeconds: number; heartbeats: TreeHeartbeats | undefined; connection: ConnectionOptions },
    private readonly outage: RedisOutage,
  ) {
    // A connection that gave up reconnecting fails every waiting child instead of leaving it hanging (QUEUE-9).
    this.lost = new Promise((lose) => command.once('end', () => lose(`Lost the connection to Redis at ${url}.`)));
    // A Redis back after an outage may have come back empty: the jobs waited for are looked for at once, and every 10 s besides (QUEUE-33).
    outage.follow(command, () => void this.checkJobs());
    this.checker = setInterval(() => void this.checkJobs(), JOB_CHECK_INTERVAL_MS);
    this.checker.unref();
    this.queueKeys = new QueueKeyLifetimes(command, queueName);
  }

  /** Handles the errors of another connection of this process as the runner's own: said once per outage (QUEUE-34). */
  watch<T extends ErrorEmitter>(emitter: T): T {
    return this.outage.watch(emitter);
  }

  /** Connects to Redis and the queue; throws a UsageError naming the URL when Redis cannot be reached (QUEUE-9). */
  static async connect(options: QueueChildRunnerOptions): Promise<QueueChildRunner> {
    const connection = connectionFor(options.url);
    const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    // A Redis that stays connected but stops answering fails each command after 5 s instead of hanging the run (QUEUE-9);
    // only this connection: BullMQ's blocking ones wait by design.
    // Its commands issued in one turn of the event loop go in one write (auto-pipelining): a fan-out's jobs cost Redis and this process one system call per turn, not one per command.
    const command = new Redis({
      ...connection,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableAutoPipelining: true,
    });
    // Refused at start, Redis is the usage error below, not an outage (QUEUE-9).
    command.on('error', () => undefined);
    try {
      await abortable(
        command.connect().then(() => command.ping()),
        AbortSignal.timeout(CONNECT_TIMEOUT_MS),
        () => new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`),
      );
    } catch (error) {
      command.disconnect();
      throw new UsageError(`--queue ${options.url}: cannot reach Redis (${(error as Error).message || 'no answer'}). Start redis-server, or check the URL.`, {
        queue: options.url,
      });
    }
    // Every connection's errors are handled from now on, and an outage said once (QUEUE-34).
    const outage = new RedisOutage(options.url, options.say);
    // Its own commands are bounded one by one (`answered`): adding a job, looking at or removing one, closing (QUEUE-9).
    const queue = outage.watch(
      new Queue(queueName, { connection: { ...connection, enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true } }),
    );
    const reader = options.relay
      ? new TraceStreamReader(outage.watch(command.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, enableAutoPipelining: false })), queueName)
      : undefined;
    const heartbeats = options.relay ? new TreeHeartbeats(command, queueName, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS) : undefined;
    const runner = new QueueChildRunner(
      queueName,
      options.url,
      queue,
      command,
      reader,
      options.timeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
      { key: options.key, keepSeconds: Math.min(options.keepSeconds ?? DEFAULT_KEEP_SECONDS, MAX_KEEP_SECONDS), heartbeats, connection },
      outage,
    );
    // The top process reads the queue's events from the start, its first delegation waiting for nothing; a worker only once one of its jobs delegates (QUEUE-10).
    if (options.relay) await runner.jobWaits();
    return runner;
  }

  /**
   * The waits for this process's jobs (QUEUE-10): one listener per kind of job end on the queue's
   * events, for all of them. Made on first use, and ready once the events are read from now on, so
   * a job added after it is never missed; a worker whose jobs delegate nothing never reads the
   * queue's events, which tell of every job of the queue.
   */
  jobWaits(): Promise<JobWaits> {
    if (!this.waits) {
      const events = this.outage.watch(new QueueEvents(this.queueName, { connection: this.setting.connection }));
      const entry: QueueWaits = {
        events,
        ready: events.waitUntilReady().then(() => {
          entry.made = new JobWaits(events);
          return entry.made;
        }),
      };
      // A start that failed is tried again by the next job.
      entry.ready.catch(() => {
        if (this.waits === entry) this.waits = undefined;
        void events.close().catch(() => undefined);
      });
      this.waits = entry;
    }
    return this.waits.ready;
  }

  /** Queues the child as a job, relays its events, and resolves to its result (QUEUE-3); never throws. */
  async run(child: RemoteChild, hooks: RemoteChildHooks): Promise<RunResult> {
    const tree = treeOf(child);
    if (hooks.signal.aborted) return failedResult(child.id, cancelled());
    if (this.reader && hooks.tracer) this.reader.follow(tree, hooks.tracer);
    const session = child.journal?.session ?? 0;
    if (this.reader && session > 0) await this.supersede(child.parent.root, session);
    let job: Awaited<ReturnType<Queue['add']>>;
    let waits: JobWaits;
    // The tree is kept alive while its child is queued, so workers end its jobs once this process is gone (QUEUE-25).
    let release = (): void => undefined;
    try {
      if (this.setting.heartbeats) release = await this.setting.heartbeats.hold(tree);
      waits = await answered(this.jobWaits());
      const keep = this.setting.keepSeconds;
      // A resumed tree's jobs are its session's: a job its killed session left behind is not answered for it (QUEUE-12).
      job = await answered(
        this.queue.add('child', jobOf(child, this.setting.key, hooks.tracer?.contextOf(child.parent.run, child.parent.callId)), {
          jobId: jobIdOf(child),
          attempts: 1,
          removeOnComplete: { age: keep },
          removeOnFail: { age: keep },
        }),
      );
      // A job no worker ever takes lives no longer than its wait; the queue's own keys a day (QUEUE-26).
      // Not waited for: the job is queued either way.
      void keepUnlessSet(this.command, jobHashKey(this.queueName, job.id as string), Math.ceil(this.timeoutMs / 1000) + keep).catch(() => undefined);
      this.queueKeys.touched();
    } catch (error) {
      release();
      return failedResult(
        child.id,
        new DelegateError('worker_error', `Cannot queue the child run on ${this.url}: ${(error as Error).message}`, { queue: this.queueName }),
      );
    }
    let grace: ReturnType<typeof setTimeout> | undefined;
    let unfollow = (): void => undefined;
    const jobId = job.id ?? jobIdOf(child);
    const gone = new Promise<string>((settle) => this.waiting.set(jobId, settle));
    const abandoned = new Promise<RunResult>((settle) => {
      // Followed only while this child is waited for: a finished child has nothing to cancel.
      unfollow = onAbort(hooks.signal, () => {
        // Removed by its cancellation, the job is not gone from Redis for the check (QUEUE-33).
        this.waiting.delete(jobId);
        // The top process's run cancelled is the whole tree cancelled (QUEUE-7); a job's run
        // cancelled on a worker ends only the jobs it waits for, which end theirs (QUEUE-22).
        void (this.reader ? this.cancelTree(tree).then(() => removeIfWaiting(job)) : this.cancelJob(job));
        grace = setTimeout(() => settle(failedResult(child.id, cancelled())), CANCEL_GRACE_MS);
      });
    });
    try {
      const outcome = await Promise.race([
        waits
          .finished<JobReturn>(job, this.timeoutMs, (queued) => this.ended(queued))
          .then(
            (value: JobReturn) => ({ value }),
            (error: Error) => ({ error }),
          ),
        abandoned.then((result) => ({ result })),
        this.lost.then((message) => ({ lost: message })),
        gone.then((message) => ({ lost: message })),
      ]);
      if ('result' in outcome) return outcome.result;
      if ('lost' in outcome) return failedResult(child.id, new DelegateError('worker_error', outcome.lost, { queue: this.queueName }));
      if ('error' in outcome) {
        const error = this.jobError(outcome.error);
        // A job no one waits for any more is ended where it is: removed while waiting, aborted on its worker (QUEUE-22).
        if (error.data.timeoutMs !== undefined) await this.cancelJob(job);
        // Every attempt that was abandoned paid for its answers all the same (QUEUE-32).
        return this.withEarlierAttempts(failedResult(child.id, error), child, hooks, jobId, undefined);
      }
      await this.reader?.reached(tree, outcome.value.trace);
      // What the child spent counts before the caller's next model call checks the budget (QUEUE-6).
      // So does a refusal of a run below it (QUEUE-20).
      await Promise.all([this.meters.get(tree)?.sync(), this.counts.get(tree)?.sync()]);
      const result = resultFromJson(outcome.value.result);
      const attempt = outcome.value.attempt ?? 1;
      return attempt > 1 ? await this.withEarlierAttempts(result, child, hooks, jobId, attempt) : result;
    } finally {
      this.waiting.delete(jobId);
      unfollow();
      clearTimeout(grace);
      release();
    }
  }

  /**
   * How a job that ended before its wait began ended, read from Redis once; undefined while it has
   * not (QUEUE-10). Read from the job's hash alone (its end time, result or failure, one HMGET):
   * BullMQ's look at a job's state searches the queue's lists, which a wide fan-out makes long, for
   * every job.
   */
  private async ended(job: Job): Promise<{ value: JobReturn } | { error: Error } | undefined> {
    const [finishedOn, returnvalue, failedReason] = await answered(
      this.command.hmget(this.queue.toKey(job.id as string), 'finishedOn', 'returnvalue', 'failedReason'),
    );
    if (!finishedOn) return undefined;
    if (returnvalue === null) return { error: new Error(failedReason ?? 'The job failed.') };
    const parsed = parseJson(returnvalue);
    return parsed.ok ? { value: parsed.value as unknown as JobReturn } : undefined;
  }

  /**
   * The child's result with what the attempts at its job before `before` (all, when undefined) paid
   * added to its usage, and traced as `queue.retried` (QUEUE-32, TRACE-24); the result as it is when
   * none paid anything or Redis cannot say.
   */
  private async withEarlierAttempts(
    result: RunResult,
    child: RemoteChild,
    hooks: RemoteChildHooks,
    jobId: string,
    before: number | undefined,
  ): Promise<RunResult> {
    const earlier = await earlierAttempts(this.command, this.queueName, jobId, before).catch(() => undefined);
    if (!earlier) return result;
    if (hooks.tracer) {
      new RunTrace(hooks.tracer, child.id, child.parent.run, child.parent.depth + 1).emit('queue.retried', {
        job: jobId,
        attempts: earlier.attempts,
        usage: earlier.usage,
      });
    }
    const add = (usage: UsageSummary): UsageSummary => ({
      ...usage,
      ...addUsage(usage, earlier.usage),
      costUsd: addCost(usage.costUsd, earlier.usage.costUsd),
    });
    return { ...result, usage: add(result.usage), usageTotal: add(result.usageTotal) };
  }

  /**
   * Fails the wait of every job that is gone from Redis (QUEUE-33): a Redis restarted empty, or one
   * that evicted the job's keys, would otherwise leave it waiting until --queue-timeout. A look that
   * Redis does not answer decides nothing; the next one, or the connection's end (QUEUE-9), does.
   */
  private async checkJobs(): Promise<void> {
    const ids = [...this.waiting.keys()];
    if (ids.length === 0) return;
    const replies = await this.command
      .pipeline(ids.map((id) => ['exists', this.queue.toKey(id)]))
      .exec()
      .catch(() => null);
    ids.forEach((id, index) => {
      const [error, exists] = replies?.[index] ?? [null, 1];
      if (error || exists !== 0) return;
      this.waiting.get(id)?.(
        `The child run's job ${id} is gone from Redis at ${this.url} (Redis restarted empty, or evicted the job's keys); its result will never come.`,
      );
    });
  }

  /** The tree's budget meter shared through Redis with every process of the tree (QUEUE-6): one per tree session (QUEUE-12) in this process. */
  meter(root: string, limit: Budget, session = 0): RedisBudgetMeter {
    const tree = treeKey(root, session);
    let meter = this.meters.get(tree);
    if (!meter) {
      meter = new RedisBudgetMeter(limit, this.command, budgetKey(this.queueName, tree));
      this.meters.set(tree, meter);
    }
    return meter;
  }

  /** The run bounds of the tree `root` (its session `session`, QUEUE-12), whose top run starts here: the tree's count in Redis starts again at 1 (QUEUE-20). */
  bounds(root: string, limits: TreeLimits, session = 0): RedisTreeBounds {
    const tree = treeKey(root, session);
    const bounds = this.countIn(tree, limits);
    bounds.start();
    this.counts.set(tree, bounds);
    return bounds;
  }

  /** The run bounds of the tree session `tree`, whose top run is elsewhere, counted in Redis (QUEUE-20): one per tree session in this process. */
  joinBounds(tree: string, limits: TreeLimits): RedisTreeBounds {
    let bounds = this.counts.get(tree);
    if (!bounds) {
      bounds = this.countIn(tree, limits);
      this.counts.set(tree, bounds);
    }
    return bounds;
  }

  /** The claims of the cassette entries of the tree session `tree` (QUEUE-17): shared by every process of the tree. */
  cassetteClaims(tree: string): RedisCassetteClaims {
    let claims = this.claims.get(tree);
    if (!claims) {
      claims = new RedisCassetteClaims(this.command, cassetteClaimsKey(this.queueName, tree));
      this.claims.set(tree, claims);
    }
    return claims;
  }

  /** Forgets the meter and bounds of a tree session this process no longer runs anything of. */
  release(tree: string): void {
    this.meters.delete(tree);
    this.counts.delete(tree);
    this.claims.delete(tree);
  }

  /** Announces that the tree session `tree` is cancelled: every worker aborts its jobs (QUEUE-7). */
  async cancelTree(tree: string): Promise<void> {
    // Marked first, announced second: a worker takes up a job either before the announcement (and hears it) or after the mark (and sees it).
    await this.command.set(cancelledKey(this.queueName, tree), '1', 'EX', 3600).catch(() => undefined);
    await this.command.publish(cancelChannel(this.queueName), tree).catch(() => undefined);
  }

  /**
   * Ends one job (QUEUE-22): marks it cancelled, announces it to the worker running it, which aborts
   * that job alone, and removes it if it is still waiting.
   */
  async cancelJob(job: Job): Promise<void> {
    if (job.id === undefined) return;
    // Marked first, announced second, as a tree is (QUEUE-7). A Redis that does not take the mark
    // takes nothing else either: the rest would only wait out its command timeout in turn (QUEUE-9).
    const marked = await this.command.set(jobCancelledKey(this.queueName, job.id), '1', 'EX', 3600).then(
      () => true,
      () => false,
    );
    if (!marked) return;
    await this.command.publish(jobCancelChannel(this.queueName), job.id).catch(() => undefined);
    await removeIfWaiting(job);
  }

  /** True when the tree session `tree` (QUEUE-7) or the job `id` (QUEUE-22) was cancelled. */
  async cancelled(tree: string, id?: string): Promise<boolean> {
    const keys = [cancelledKey(this.queueName, tree), ...(id === undefined ? [] : [jobCancelledKey(this.queueName, id)])];
    return (await this.command.exists(...keys).catch(() => 0)) > 0;
  }

  /**
   * Ends the sessions a resumed tree's `session` follows (QUEUE-14), once per tree: their jobs
   * still running, which no process waits for since the top process that queued them was killed,
   * are cancelled as a cancelled tree's are, and their trace streams deleted.
   */
  private supersede(root: string, session: number): Promise<void> {
    const tree = treeKey(root, session);
    let ended = this.superseded.get(tree);
    if (!ended) {
      const earlier = Array.from({ length: session }, (_, index) => treeKey(root, index));
      ended = Promise.all(earlier.map((old) => this.cancelTree(old))).then(async () => {
        await this.command.del(...earlier.map((old) => traceStreamKey(this.queueName, old))).catch(() => undefined);
      });
      this.superseded.set(tree, ended);
    }
    return ended;
  }

  /** Stops relaying, deletes the streams of the trees it relayed and closes every connection. */
  async close(): Promise<void> {
    const waits = this.waits;
    this.waits = undefined;
    waits?.made?.close();
    await this.setting.heartbeats?.close();
    await this.queueKeys.close();
    clearInterval(this.checker);
    this.outage.close();
    if (this.reader) {
      await this.reader.forget(this.command);
      await this.reader.close();
    }
    const [, queueClosed] = await Promise.allSettled([waits?.events.close(), answered(this.queue.close())]);
    // A Redis that does not answer the goodbye is left without one.
    if (queueClosed.status === 'rejected') await this.queue.disconnect().catch(() => undefined);
    this.command.disconnect();
  }

  private countIn(tree: string, limits: TreeLimits): RedisTreeBounds {
    return new RedisTreeBounds(limits, this.command, runsKey(this.queueName, tree), this.url);
  }

  private jobError(error: Error): ProtocolError {
    const timedOut = /timed out|ttl/i.test(error.message);
    return new DelegateError(
      'worker_error',
      timedOut
        ? `The child run's job on ${this.url} gave no result within ${Math.round(this.timeoutMs / 1000)} s (--queue-timeout).`
        : `The child run's job on ${this.url} failed: ${error.message}`,
      { queue: this.queueName, ...(timedOut ? { timeoutMs: this.timeoutMs } : {}) },
    );
  }
}

/** Removes a job no worker has taken up yet; a finished one keeps its result for a resumed tree (QUEUE-2). */
async function removeIfWaiting(job: Job): Promise<void> {
  if (await answered(job.isWaiting()).catch(() => false)) await answered(job.remove()).catch(() => undefined);
}

/**
 * `work`, a command on the queue's connection, or a failure once Redis has not answered it within
 * {@link COMMAND_TIMEOUT_MS} (QUEUE-9). Bounded here rather than by the connection's own command
 * timeout: BullMQ looks at a job it waits for on that connection from inside a promise nobody
 * handles, and a timed-out look there would end the process.
 */
function answered<T>(work: Promise<T>): Promise<T> {
  return abortable(work, AbortSignal.timeout(COMMAND_TIMEOUT_MS), () => new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS / 1000} s.`));
}
