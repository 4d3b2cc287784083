/** The worker side of the queue (QUEUE-3): runs child-run jobs with a runtime set up like delegate-run's. */
import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { DelegateError, type ProtocolError, toProtocolError } from '../protocol/errors.js';
import type { Model } from '../protocol/model.js';
import { shareCassette } from '../models/shared-cassette.js';
import { runRemoteChild } from '../protocol/run/remote-child.js';
import type { ConfirmHook, RunResult } from '../protocol/contracts.js';
import type { Runtime } from '../protocol/run/runtime.js';
import { RunTrace, type TraceContext, Tracer } from '../protocol/trace/trace.js';
import { QueueChildRunner, type JobReturn } from './queue-child-runner.js';
import { aliveKey, cancelChannel, jobCancelChannel, jobHashKey, jobIdOf, traceStreamKey, treeOf } from './queue-keys.js';
import { DEFAULT_KEEP_SECONDS, MAX_KEEP_SECONDS, QueueKeyLifetimes, WORKER_CHECK_MS } from './key-lifetimes.js';
import { childOfJob, type JobResolver, readJob } from './queue-job.js';
import { connectionFor, DEFAULT_QUEUE_NAME } from './redis-url.js';
import { failedResult, resultToJson } from './run-result-json.js';
import { TraceStreamWriter } from './trace-relay.js';
import { JobAttempt } from './job-attempt.js';
import { LockKeeper } from './lock-keeper.js';

/** How long a running job's hash lives past its worker's last check (QUEUE-26): five minutes, or its keep when longer. */
const RUNNING_SECONDS = 300;

/** How long one look for a job waits on Redis when there is none, in seconds: how long a closing worker may wait before it stops taking jobs (QUEUE-35). */
const FETCH_WAIT_SECONDS = 1;

/** How many looks for jobs a worker has in flight at once while jobs are waiting (QUEUE-35). */
const PARALLEL_LOOKS = 8;

/** How long the fetching waits after Redis failed a look for a job, before it looks again. */
const FETCH_RETRY_MS = 1000;

/**
 * Takes the queue's jobs and starts each at once, up to `concurrency` running (QUEUE-35): one look
 * waits on Redis for a job to come; once one came, several look at once until none is left.
 * BullMQ's own loop fetched one job after another up to its concurrency before it started any, so
 * a burst of a thousand jobs waited for the last one's fetch. A job is ended as
 * BullMQ's loop ends it: completed with its return value, or failed with what `run` threw; `ended`
 * hears of each. `stop` takes no more and resolves once the running jobs ended.
 */
function takeJobs(
  worker: Worker<unknown, JobReturn>,
  concurrency: number,
  run: (job: Job<unknown, JobReturn>, token: string) => Promise<JobReturn>,
  ended: (job: Job) => void,
): { stop(): Promise<void> } {
  const running = new Set<Promise<void>>();
  let stopping = false;
  let room: (() => void) | undefined;
  const take = async (job: Job<unknown, JobReturn>, token: string): Promise<void> => {
    let value: JobReturn;
    try {
      value = await run(job, token);
    } catch (error) {
      await job.moveToFailed(error instanceof Error ? error : new Error(String(error)), token, false).then(() => ended(job));
      return;
    }
    // A job whose lock another worker took over is that worker's to end: BullMQ refuses the move, and it is let be.
    await job.moveToCompleted(value, token, false).then(() => ended(job));
  };
  let next = 0;
  const start = (job: Job<unknown, JobReturn>, token: string): void => {
    // Taken, the job runs even when the worker is stopping: it is active in Redis, and ends here.
    const task = take(job, token)
      .catch(() => undefined)
      .finally(() => {
        running.delete(task);
        room?.();
        room = undefined;
      });
    running.add(task);
  };
  // While jobs are waiting, several looks at once, none of them waiting on Redis for a job to come: round trips overlap.
  const drain = async (): Promise<void> => {
    while (!stopping && running.size < concurrency) {
      const token = `${worker.id}:${next++}`;
      const job = await worker.getNextJob(token, { block: false }).catch(() => undefined);
      if (!job) return;
      start(job, token);
    }
  };
  const loop = (async () => {
    while (!stopping) {
      if (running.size >= concurrency) {
        await new Promise<void>((wake) => {
          room = wake;
        });
        continue;
      }
      // One look waits on Redis for a job to come, at most FETCH_WAIT_SECONDS.
      const token = `${worker.id}:${next++}`;
      let job: Job<unknown, JobReturn> | undefined;
      try {
        job = await worker.getNextJob(token);
      } catch {
        // Redis is away: its outage is said by the connection (QUEUE-34); the look is tried again.
        await new Promise((wait) => setTimeout(wait, FETCH_RETRY_MS));
        continue;
      }
      if (!job) continue;
      start(job, token);
      await Promise.all(Array.from({ length: PARALLEL_LOOKS }, drain));
    }
  })();
  return {
    async stop() {
      stopping = true;
      room?.();
      await loop;
      await Promise.all([...running]);
    },
  };
}

/** How many jobs one worker process runs at once by default (`--concurrency`, QUEUE-8). */
export const DEFAULT_WORKER_CONCURRENCY = 32;

/** Options of {@link startQueueWorker}. */
export interface QueueWorkerOptions {
  url: string;
  queueName?: string;
  /** Jobs run at once (default 32). */
  concurrency?: number;
  /** The runtime jobs run on; its child runs become jobs again. */
  runtime: Runtime;
  /**
   * Creates a child's model from the spec its job asks for (`Model.id`) and the live model it stands
   * for. A job's spec is only the caller's wish: this throws for a spec the worker would not choose
   * itself, and never opens a cassette its job names (QUEUE-23).
   */
  model: (spec: string, standsFor: string | undefined) => Model;
  /** Resolves a job's reference with the worker's own resolvers, confined to its root and hosts (QUEUE-23). */
  resolvers: JobResolver;
  /** The folder this worker's file delegates are confined to (`--root`): a job's document must be under it (QUEUE-23). */
  root: string;
  /** The key jobs must be signed with (`DELEGATE_QUEUE_KEY`, QUEUE-24); without one, unsigned jobs run too. */
  key?: string;
  /** Told of each job refused before it ran: malformed, or not signed with the key (QUEUE-23, QUEUE-24). */
  onRefused?: (job: string, error: ProtocolError) => void;
  /** How often the heartbeats of the trees it runs jobs of are looked at (default 2 s, QUEUE-25). */
  checkMs?: number;
  /** Decides the approvals of the children it runs (QUEUE-11); the CLI gives its `--approve` policy, strict by default. */
  confirm?: ConfirmHook;
  /** How long a job's lock lasts without renewal before another worker may take it (default 30 s, QUEUE-8). */
  lockMs?: number;
  /** Says a line to the operator (the CLI: stderr): a Redis outage, once (QUEUE-34). */
  say?: (line: string) => void;
  /**
   * Sends the spans of each job's runs (an OpenTelemetry export, TEL-8): given the job's tracer and
   * the trace context its data carries, before anything is traced; returns the function that stops.
   */
  traceTo?: (tracer: Tracer, parent: TraceContext | undefined) => () => void;
}

/** A running worker: close it to stop taking jobs (running ones finish first). */
export interface QueueWorker {
  readonly id: string;
  close(): Promise<void>;
}

/** Starts a BullMQ worker on the queue; throws a UsageError when Redis cannot be reached (QUEUE-9). */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const connection = connectionFor(options.url);
  // Children of children are jobs again (QUEUE-3); their events go to the tree's stream directly.
  const runner = await QueueChildRunner.connect({
    url: options.url,
    queueName,
    relay: false,
    ...(options.say ? { say: options.say } : {}),
    ...(options.key === undefined ? {} : { key: options.key }),
  });
  options.runtime.useChildRunner(runner);
  const id = `${hostname()}:${process.pid}`;
  // Every connection's errors are handled with the runner's, an outage said once (QUEUE-34).
  // The jobs' trace events, usage and checks: what is sent in one turn of the event loop goes in one write (auto-pipelining).
  const publisher = runner.watch(new Redis({ ...connection, maxRetriesPerRequest: 1, enableAutoPipelining: true }));
  const subscriber = runner.watch(new Redis({ ...connection, maxRetriesPerRequest: null }));
  // Heartbeats and lifetimes on a connection of their own whose commands give up after 5 s: a Redis that stops answering holds no job's start (QUEUE-9, QUEUE-25).
  const lifetimes = runner.watch(new Redis({ ...connection, maxRetriesPerRequest: 1, commandTimeout: 5000, enableAutoPipelining: true }));
  // BullMQ's keys of the queue, refreshed after jobs end at most every few seconds, and at every check (QUEUE-26).
  const queueKeys = new QueueKeyLifetimes(lifetimes, queueName);
  /** True while the tree's top process keeps it alive (QUEUE-25). */
  const alive = (tree: string): Promise<boolean> =>
    lifetimes.exists(aliveKey(queueName, tree)).then(
      (count) => count > 0,
      // A Redis that cannot answer ends no job: its own faults are QUEUE-9's.
      () => true,
    );
  const active = new Map<string, Set<AbortController>>();
  // The jobs running here by id, so one its caller gave up on can be ended alone (QUEUE-22).
  const jobs = new Map<string, AbortController>();
  // How long each job running here is kept once finished, by its hash's id (QUEUE-26).
  const kept = new Map<string, number>();
  await subscriber.subscribe(cancelChannel(queueName), jobCancelChannel(queueName));
  subscriber.on('message', (channel: string, name: string) => {
    if (channel === jobCancelChannel(queueName)) jobs.get(name)?.abort();
    else for (const controller of active.get(name) ?? []) controller.abort();
  });
  const lockMs = options.lockMs ?? 30_000;
  // Locks renewed off this event loop, so a busy Activity does not hand its job to another worker (QUEUE-30).
  const keeper = new LockKeeper(options.url, lockMs);
  const processJob = async (job: Job<unknown, JobReturn>, token?: string): Promise<JobReturn> => {
    // Nothing of a job is used before its data is checked: shape, then signature (QUEUE-23, QUEUE-24).
    const read = readJob(job.data, options.key, job.id ?? '(no id)');
    if (!read.ok) {
      options.onRefused?.(job.id ?? '(no id)', read.error);
      return { result: resultToJson(failedResult(job.id ?? '(no id)', read.error)), trace: null };
    }
    const described = read.child;
    // Keys are the tree session's (QUEUE-12): a resumed tree's jobs do not mix with those its killed session left.
    const tree = treeOf(described);
    const controller = new AbortController();
    const running = active.get(tree) ?? new Set();
    running.add(controller);
    active.set(tree, running);
    const jobId = jobIdOf(described);
    jobs.set(jobId, controller);
    // By BullMQ's own id: the hash renewed is the one this worker runs, whatever id its data claims.
    const hash = job.id ?? jobId;
    kept.set(hash, keptSeconds(job));
    const lock = `${jobHashKey(queueName, hash)}:lock`;
    if (token !== undefined) keeper.hold(lock, token);
    // A tree or job cancelled before this job was taken up ends it at once (QUEUE-7, QUEUE-22), and so does a tree whose top process is gone (QUEUE-25).
    // Both looked at together: one round trip before the job starts, not two.
    const [cancelled, living] = await Promise.all([runner.cancelled(tree, jobId), alive(tree)]);
    if (cancelled || !living) controller.abort();
    const writer = new TraceStreamWriter(publisher, traceStreamKey(queueName, tree));
    let attempt: JobAttempt | undefined;
    const tracer = new Tracer([(event) => writer.append(event), (event) => attempt?.observe(event)]);
    // The child's spans are the delegating call's children, one trace across processes (TEL-6, TEL-8).
    const stopSpans = options.traceTo?.(tracer, described.traceContext);
    const attemptNumber = job.attemptsStarted;
    const done = async (result: RunResult): Promise<JobReturn> => ({ result: resultToJson(result), trace: await writer.flushed(), attempt: attemptNumber });
    try {
      // Each attempt at a job is traced, so a job another worker took over shows twice (QUEUE-8).
      new RunTrace(tracer, described.id, described.parent.run, described.parent.depth + 1).emit('queue.job', {
        job: job.id ?? described.id,
        queue: queueName,
        worker: id,
        attempt: attemptNumber,
      });
      // The calls earlier attempts started and the usage of this one go to Redis (QUEUE-31, QUEUE-32).
      try {
        attempt = await JobAttempt.begin(
          publisher,
          { queueName, url: options.url },
          { id: hash, run: described.id, attempt: attemptNumber, lock: { key: lock, token: token ?? '' } },
        );
      } catch (error) {
        const problem = `Cannot read from Redis at ${options.url} which calls earlier attempts at the job started: ${(error as Error).message}`;
        return done(failedResult(described.id, new DelegateError('worker_error', problem, { queue: queueName })));
      }
      let model: Model | undefined;
      let child: Awaited<ReturnType<typeof childOfJob>>;
      try {
        // The document is the worker's own resolvers' answer, and so is its trust (QUEUE-23). Not cut short by a
        // cancellation (the resolvers bound their own reads, DEL-5): a child cancelled now is traced as run and cancelled, as before.
        child = await childOfJob(described, { resolvers: options.resolvers, handlers: options.runtime.handlers, root: options.root });
        // The cassette of a replayed model is the tree's, its entries used once across processes (QUEUE-17).
        model = child.model === null ? undefined : shareCassette(options.model(child.model, child.standsFor), runner.cassetteClaims(tree));
      } catch (error) {
        return done(failedResult(described.id, toProtocolError(error, 'usage_error')));
      }
      // The tree's spending so far, as every process of the tree shares it (QUEUE-6).
      const meter = child.budget === undefined ? undefined : runner.meter(child.parent.root, child.budget, child.journal?.session);
      // And its one count of runs (QUEUE-20).
      const bounds = runner.joinBounds(tree, child.limits);
      await Promise.all([meter?.sync(), bounds.sync()]);
      const result = await runRemoteChild(options.runtime, child, {
        ...(meter === undefined ? {} : { meter }),
        bounds,
        model,
        signal: controller.signal,
        tracer,
        ...(options.confirm ? { confirm: options.confirm } : {}),
        startedCalls: attempt,
      });
      return await done(result);
    } finally {
      stopSpans?.();
      keeper.drop(lock);
      if (jobs.get(jobId) === controller) jobs.delete(jobId);
      kept.delete(hash);
      running.delete(controller);
      if (running.size === 0) {
        active.delete(tree);
        runner.release(tree);
      }
    }
  };
  // Jobs are fetched here, not by BullMQ's own loop, so each starts as soon as it is taken (QUEUE-35); BullMQ's worker
  // moves them, checks for stalled ones (QUEUE-8) and ends them. Their locks are kept by the lock keeper (QUEUE-30).
  const worker = runner.watch(
    new Worker<unknown, JobReturn>(queueName, null, {
      // The looks for jobs and their ends sent in one turn go in one write (auto-pipelining); the blocking look has a connection of its own.
      connection: { ...connection, maxRetriesPerRequest: null, enableAutoPipelining: true },
      lockDuration: lockMs,
      stalledInterval: Math.max(500, Math.round(lockMs / 2)),
      maxStalledCount: 3,
      drainDelay: FETCH_WAIT_SECONDS,
      autorun: false,
    }),
  );
  // A finished job is removed when its time is up, whatever the queue's traffic after it; so are the sets listing it (QUEUE-26).
  // Once BullMQ has written its end: a lifetime given before could lapse before it, and BullMQ would write the job anew without one.
  const finished = (job: Job | undefined) => {
    if (job?.id === undefined) return;
    void lifetimes.expire(jobHashKey(queueName, job.id), keptSeconds(job)).catch(() => undefined);
    queueKeys.touched();
  };
  await worker.waitUntilReady();
  void worker.startStalledCheckTimer().catch(() => undefined);
  const taking = takeJobs(worker, options.concurrency ?? DEFAULT_WORKER_CONCURRENCY, processJob, finished);
  let checking = false;
  // Checked on a timer, not on traffic: a caller killed outright has its jobs ended within its heartbeat's life and one check (QUEUE-25).
  const check = setInterval(() => {
    if (checking) return;
    checking = true;
    void (async () => {
      const trees = [...active.keys()];
      const gone = await Promise.all(trees.map(async (tree) => ((await alive(tree)) ? undefined : tree)));
      for (const tree of gone) for (const controller of tree === undefined ? [] : (active.get(tree) ?? [])) controller.abort();
      // Running jobs and the queue's own keys live on while this worker does (QUEUE-26).
      await Promise.all([...kept].map(([job, seconds]) => lifetimes.expire(jobHashKey(queueName, job), Math.max(seconds, RUNNING_SECONDS))));
      await queueKeys.refresh();
    })()
      .catch(() => undefined)
      .finally(() => {
        checking = false;
      });
  }, options.checkMs ?? WORKER_CHECK_MS);
  check.unref();
  return {
    id,
    async close() {
      clearInterval(check);
      await taking.stop();
      await worker.close();
      await queueKeys.close();
      await keeper.close();
      await runner.close();
      subscriber.disconnect();
      publisher.disconnect();
      lifetimes.disconnect();
    },
  };
}

/** How long a finished job asks to be kept (its `removeOnComplete` age, QUEUE-26): at most a day, an hour when it says nothing. */
function keptSeconds(job: Job): number {
  const remove = job.opts.removeOnComplete;
  const age = typeof remove === 'object' && 'age' in remove && typeof remove.age === 'number' ? remove.age : DEFAULT_KEEP_SECONDS;
  return Math.max(1, Math.min(Math.round(age), MAX_KEEP_SECONDS));
}
