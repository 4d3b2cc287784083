/** The worker side of the queue (QUEUE-3): runs child-run jobs with a runtime set up like delegate-run's. */
import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { DelegateError, toProtocolError } from '../protocol/errors.js';
import type { Model } from '../protocol/model.js';
import { shareCassette } from '../models/shared-cassette.js';
import { runRemoteChild } from '../protocol/run/remote-child.js';
import type { ConfirmHook, RemoteChild, RunResult } from '../protocol/contracts.js';
import type { Runtime } from '../protocol/run/runtime.js';
import { RunTrace, Tracer } from '../protocol/trace/trace.js';
import { QueueChildRunner, type JobReturn } from './queue-child-runner.js';
import { cancelChannel, jobCancelChannel, jobIdOf, traceStreamKey, treeOf } from './queue-keys.js';
import { connectionFor, DEFAULT_QUEUE_NAME } from './redis-url.js';
import { failedResult, resultToJson } from './run-result-json.js';
import { TraceStreamWriter } from './trace-relay.js';
import { JobAttempt } from './job-attempt.js';
import { LockKeeper } from './lock-keeper.js';

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
  /** Creates a child's model from its spec (`Model.id`) and the live model it stands for. */
  model: (spec: string, standsFor: string | undefined) => Model;
  /** Decides the approvals of the children it runs (QUEUE-11); the CLI gives its `--approve` policy, strict by default. */
  confirm?: ConfirmHook;
  /** How long a job's lock lasts without renewal before another worker may take it (default 30 s, QUEUE-8). */
  lockMs?: number;
  /** Says a line to the operator (the CLI: stderr): a Redis outage, once (QUEUE-34). */
  say?: (line: string) => void;
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
  const runner = await QueueChildRunner.connect({ url: options.url, queueName, relay: false, ...(options.say ? { say: options.say } : {}) });
  options.runtime.useChildRunner(runner);
  const id = `${hostname()}:${process.pid}`;
  // Every connection's errors are handled with the runner's, an outage said once (QUEUE-34).
  const publisher = runner.watch(new Redis({ ...connection, maxRetriesPerRequest: 1 }));
  const subscriber = runner.watch(new Redis({ ...connection, maxRetriesPerRequest: null }));
  const active = new Map<string, Set<AbortController>>();
  // The jobs running here by id, so one its caller gave up on can be ended alone (QUEUE-22).
  const jobs = new Map<string, AbortController>();
  await subscriber.subscribe(cancelChannel(queueName), jobCancelChannel(queueName));
  subscriber.on('message', (channel: string, name: string) => {
    if (channel === jobCancelChannel(queueName)) jobs.get(name)?.abort();
    else for (const controller of active.get(name) ?? []) controller.abort();
  });
  const lockMs = options.lockMs ?? 30_000;
  // Locks renewed off this event loop, so a busy Activity does not hand its job to another worker (QUEUE-30).
  const keeper = new LockKeeper(options.url, lockMs);
  const processJob = async (job: Job<RemoteChild, JobReturn>, token?: string): Promise<JobReturn> => {
    const child = job.data;
    // Keys are the tree session's (QUEUE-12): a resumed tree's jobs do not mix with those its killed session left.
    const tree = treeOf(child);
    const controller = new AbortController();
    const running = active.get(tree) ?? new Set();
    running.add(controller);
    active.set(tree, running);
    const jobId = jobIdOf(child);
    jobs.set(jobId, controller);
    const lock = `${worker.opts.prefix ?? 'bull'}:${queueName}:${job.id ?? jobId}:lock`;
    if (token !== undefined) keeper.hold(lock, token);
    // A tree or job cancelled before this job was taken up ends it at once (QUEUE-7, QUEUE-22).
    if (await runner.cancelled(tree, jobId)) controller.abort();
    const writer = new TraceStreamWriter(publisher, traceStreamKey(queueName, tree));
    let attempt: JobAttempt | undefined;
    const tracer = new Tracer([(event) => writer.append(event), (event) => attempt?.observe(event)]);
    const attemptNumber = job.attemptsStarted;
    const done = async (result: RunResult): Promise<JobReturn> => ({ result: resultToJson(result), trace: await writer.flushed(), attempt: attemptNumber });
    try {
      // Each attempt at a job is traced, so a job another worker took over shows twice (QUEUE-8).
      new RunTrace(tracer, child.id, child.parent.run, child.parent.depth + 1).emit('queue.job', {
        job: job.id ?? child.id,
        queue: queueName,
        worker: id,
        attempt: attemptNumber,
      });
      // The calls earlier attempts started and the usage of this one go to Redis (QUEUE-31, QUEUE-32).
      try {
        attempt = await JobAttempt.begin(
          publisher,
          { queueName, url: options.url },
          { id: job.id ?? jobId, run: child.id, attempt: attemptNumber, lock: { key: lock, token: token ?? '' } },
        );
      } catch (error) {
        const problem = `Cannot read from Redis at ${options.url} which calls earlier attempts at the job started: ${(error as Error).message}`;
        return done(failedResult(child.id, new DelegateError('worker_error', problem, { queue: queueName })));
      }
      let model: Model | undefined;
      try {
        // The cassette of a replayed model is the tree's, its entries used once across processes (QUEUE-17).
        model = child.model === null ? undefined : shareCassette(options.model(child.model, child.standsFor), runner.cassetteClaims(tree));
      } catch (error) {
        return done(failedResult(child.id, toProtocolError(error, 'usage_error')));
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
      keeper.drop(lock);
      if (jobs.get(jobId) === controller) jobs.delete(jobId);
      running.delete(controller);
      if (running.size === 0) {
        active.delete(tree);
        runner.release(tree);
      }
    }
  };
  const worker = new Worker<RemoteChild, JobReturn>(queueName, processJob, {
    connection: { ...connection, maxRetriesPerRequest: null },
    concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
    lockDuration: lockMs,
    stalledInterval: Math.max(500, Math.round(lockMs / 2)),
    maxStalledCount: 3,
  });
  runner.watch(worker);
  await worker.waitUntilReady();
  return {
    id,
    async close() {
      await worker.close();
      await keeper.close();
      await runner.close();
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}
