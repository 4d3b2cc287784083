// The trace relay on a real redis-server (QUEUE-5): a stream outlives no top process by more than a day, a line that is no event does not stop the relay, and a value JSON cannot hold is named, not the event dropped (TRACE-13).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_SECONDS, traceStreamKey } from '../../src/queue/queue-keys.js';
import { TraceStreamReader, TraceStreamWriter } from '../../src/queue/trace-relay.js';
import { type TraceEvent, Tracer } from '../../src/protocol/trace/trace.js';
import { REDIS_SKIP_REASON, redisAvailable, startRedis, type TestRedis } from '../helpers/redis-server.js';

const event = (name: string, extra: Record<string, unknown> = {}): TraceEvent => ({ ts: 'x', event: name, run: 'run_a', parent: null, depth: 1, ...extra });

describe.skipIf(!redisAvailable)(redisAvailable ? 'the trace relay on a real redis-server' : `trace relay tests, ${REDIS_SKIP_REASON}`, () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('gives the stream an expiry with each event, so a tree whose top process was killed does not stay in Redis', async () => {
    const key = traceStreamKey('relay', 'run_expiring');
    const writer = new TraceStreamWriter(client, key);
    writer.append(event('run.started'));
    expect(await writer.flushed()).toMatch(/^\d+-\d+$/);
    const ttl = await client.ttl(key);
    expect(ttl).toBeGreaterThan(KEPT_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(KEPT_SECONDS);
  });

  it('skips a line that is no event and relays the events after it', async () => {
    const root = 'run_garbled';
    const key = traceStreamKey('relay', root);
    const seen: TraceEvent[] = [];
    const reader = new TraceStreamReader(client.duplicate(), 'relay');
    try {
      reader.follow(root, new Tracer([(received) => seen.push(received)]));
      await client.xadd(key, '*', 'e', '{not json');
      const writer = new TraceStreamWriter(client, key);
      writer.append(event('run.completed', { big: 10n }));
      await reader.reached(root, await writer.flushed());
      expect(seen.map((received) => received.event)).toEqual(['run.completed']);
      expect(String(seen[0]?.big)).toMatch(/^\[not JSON/);
    } finally {
      await reader.close();
    }
  });

  it('lets a caller waiting for events go on when Redis stays connected but stops answering, rather than hang with it (QUEUE-9)', async () => {
    const own = await startRedis();
    // As the runner makes its reader: every command gives up after 5 s, and none is ever dropped.
    const reading = new Redis(own.url, { commandTimeout: 5000, maxRetriesPerRequest: null });
    const reader = new TraceStreamReader(reading, 'relay');
    try {
      reader.follow('run_stalled', new Tracer());
      own.process.kill('SIGSTOP');
      const started = Date.now();
      // An event Redis took but the reader can no longer fetch.
      await reader.reached('run_stalled', `${Date.now() + 60_000}-0`);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      own.process.kill('SIGCONT');
      await reader.close();
      await own.stop();
    }
  }, 30_000);
});
