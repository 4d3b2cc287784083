/** Remote runs' trace events through a Redis stream per run tree (QUEUE-5): workers append, the top process reads and re-emits. */
import type { Redis } from 'ioredis';
import { type TraceEvent, type Tracer, traceLine } from '../protocol/trace/trace.js';
import { KEPT_SECONDS, streamIdReached, traceStreamKey } from './queue-keys.js';

/** The events appended to one stream in one turn of the event loop, sent together: their XADDs and one EXPIRE after them. */
interface StreamBatch {
  lines: string[];
  /** Each line's settle, with its stream id (null when Redis failed it). */
  settles: ((id: string | null) => void)[];
}

/** The batches not sent yet, by connection and stream: the jobs of one process appending to one tree's stream share them. */
const unsent = new WeakMap<Redis, Map<string, StreamBatch>>();

/** Appends the events of one job's runs to its tree's stream, in the order they happen. */
export class TraceStreamWriter {
  private last: Promise<string | null> = Promise.resolve(null);

  constructor(
    private readonly client: Redis,
    private readonly key: string,
  ) {}

  /**
   * Appends one event. The events a process appends to one stream within a turn of its event loop
   * go in one write, with one expiry after them; commands on one connection keep their order, so a
   * run's events stay in order.
   */
  append(event: TraceEvent): void {
    // Written as the trace file writes it (TRACE-13): a value JSON cannot hold is named, not the event dropped.
    const line = traceLine(event).slice(0, -1);
    let streams = unsent.get(this.client);
    if (!streams) {
      streams = new Map();
      unsent.set(this.client, streams);
    }
    let batch = streams.get(this.key);
    if (!batch) {
      const fresh: StreamBatch = { lines: [], settles: [] };
      streams.set(this.key, fresh);
      queueMicrotask(() => send(this.client, this.key, fresh));
      batch = fresh;
    }
    batch.lines.push(line);
    this.last = new Promise((settle) => batch.settles.push(settle));
  }

  /** The id of the last event appended, once Redis has it (null when none was, or Redis failed). */
  flushed(): Promise<string | null> {
    return this.last;
  }
}

/** Sends one batch: its XADDs, then the stream kept a day after its last event, as the tree's other keys (a top process killed outright never deletes it). */
function send(client: Redis, key: string, batch: StreamBatch): void {
  unsent.get(client)?.delete(key);
  const pipeline = client.pipeline();
  for (const line of batch.lines) pipeline.xadd(key, '*', 'e', line);
  pipeline.expire(key, KEPT_SECONDS);
  pipeline.exec().then(
    (replies) => {
      batch.settles.forEach((settle, index) => {
        const [error, id] = replies?.[index] ?? [null, null];
        settle(error ? null : ((id as string | null | undefined) ?? null));
      });
    },
    () => {
      for (const settle of batch.settles) settle(null);
    },
  );
}

/** Reads the streams of run trees this process is the top of, re-emitting their events into each tree's tracer. */
export class TraceStreamReader {
  private readonly trees = new Map<string, { key: string; tracer: Tracer; last: string; waiters: { id: string; done: () => void }[] }>();
  private closed = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly client: Redis,
    private readonly queueName: string,
  ) {}

  /** Starts relaying the tree `root`'s events into `tracer` (once per tree). */
  follow(root: string, tracer: Tracer): void {
    if (this.trees.has(root)) return;
    this.trees.set(root, { key: traceStreamKey(this.queueName, root), tracer, last: '0-0', waiters: [] });
    this.running ??= this.loop();
  }

  /** Resolves once the tree's events up to stream id `id` have been re-emitted (at once for null; or when the reader stops, or a read finds Redis not answering, QUEUE-9). */
  reached(root: string, id: string | null): Promise<void> {
    const tree = this.trees.get(root);
    if (!tree || id === null || this.closed || streamIdReached(tree.last, id)) return Promise.resolve();
    return new Promise((done) => tree.waiters.push({ id, done }));
  }

  /** Stops reading and deletes the streams of the trees it followed. */
  async close(): Promise<void> {
    this.closed = true;
    this.release();
    this.client.disconnect();
    await this.running?.catch(() => undefined);
  }

  /** Deletes the streams of the trees it followed (through another connection). */
  async forget(client: Redis): Promise<void> {
    const keys = [...this.trees.values()].map((tree) => tree.key);
    if (keys.length > 0) await client.del(...keys).catch(() => undefined);
  }

  /** Lets every waiter go on, whatever it waited for. */
  private release(): void {
    for (const tree of this.trees.values()) for (const waiter of tree.waiters.splice(0)) waiter.done();
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      const trees = [...this.trees.values()];
      let answer: [string, [string, string[]][]][] | null;
      try {
        answer = (await this.client.xread('COUNT', 1000, 'BLOCK', 200, 'STREAMS', ...trees.map((tree) => tree.key), ...trees.map((tree) => tree.last))) as
          | [string, [string, string[]][]][]
          | null;
      } catch {
        if (this.closed) return;
        // A read fails only when Redis has not answered within the connection's command timeout (QUEUE-9):
        // whoever waits for events goes on without them rather than hang with Redis; events read later are still relayed.
        this.release();
        await new Promise((wait) => setTimeout(wait, 200));
        continue;
      }
      for (const [key, entries] of answer ?? []) {
        const tree = trees.find((candidate) => candidate.key === key);
        if (!tree) continue;
        for (const [id, fields] of entries) {
          tree.last = id;
          const line = fields[1];
          if (line === undefined) continue;
          // A line that is not an event (another writer on the same stream) is skipped: the relay must not stop, or every later child's result would wait on it.
          let event: TraceEvent;
          try {
            event = JSON.parse(line) as TraceEvent;
          } catch {
            continue;
          }
          tree.tracer.emit(event);
        }
        tree.waiters = tree.waiters.filter((waiter) => {
          if (!streamIdReached(tree.last, waiter.id)) return true;
          waiter.done();
          return false;
        });
      }
    }
  }
}
