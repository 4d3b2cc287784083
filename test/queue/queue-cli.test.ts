// The command lines of the queue without Redis: delegate-worker's usage errors and help, and delegate-mcp taking --queue (CLI-24, CLI-25, MCP-24).
import { describe, expect, it } from 'vitest';
import { parseMcpArguments } from '../../src/cli/mcp.js';
import { parseArguments } from '../../src/cli/run-setup.js';
import { parseWorkerArguments } from '../../src/cli/worker.js';
import { connectionFor } from '../../src/queue/redis-url.js';
import { runCli } from '../helpers/cli.js';
import { WORKER_BIN } from '../helpers/queue-workers.js';

describe('delegate-worker and --queue on the command line', () => {
  it('reads a Redis URL with its port, database and password, and refuses anything else naming the flag (QUEUE-4)', () => {
    expect(connectionFor('redis://:s%40cret@redis-host:6380/3')).toMatchObject({ host: 'redis-host', port: 6380, db: 3, password: 's@cret' });
    expect(connectionFor('redis://127.0.0.1')).toMatchObject({ host: '127.0.0.1', port: 6379, db: 0 });
    expect(connectionFor('rediss://h:1/0')).toMatchObject({ tls: {} });
    expect(() => connectionFor('http://h:6379')).toThrow('--queue http://h:6379: expected a redis:// or rediss:// URL, got the scheme "http".');
    expect(() => connectionFor('redis://h/x')).toThrow('the database "x" is not a whole number');
    expect(() => connectionFor('not a url')).toThrow('expected a Redis URL such as redis://127.0.0.1:6379/0');
  });

  it('parses the worker flags with their defaults, and refuses a missing --queue, a bad count and an interactive approval (CLI-25)', () => {
    expect(parseWorkerArguments(['--queue', 'redis://h:1/0', '--concurrency', '8', '--lock-seconds', '2', '--approve', 'approve_all'])).toMatchObject({
      queue: 'redis://h:1/0',
      concurrency: 8,
      lockMs: 2000,
      approve: 'approve_all',
    });
    expect(parseWorkerArguments(['--queue', 'redis://h:1/0'])).toMatchObject({ approve: 'strict', activities: [], models: [] });
    expect(parseWorkerArguments(['--queue', 'redis://h:1/0', '--model', 'replay:a.json', '--model', 'openai:gpt-4.1-mini'])).toMatchObject({
      models: ['replay:a.json', 'openai:gpt-4.1-mini'],
    });
    expect(() => parseWorkerArguments([])).toThrow('--queue <redis://host:port/db> is required');
    expect(() => parseWorkerArguments(['--queue', 'redis://h:1/0', '--concurrency', '0'])).toThrow(
      '--concurrency expects a whole number of at least 1, got "0".',
    );
    expect(() => parseWorkerArguments(['--queue', 'redis://h:1/0', '--approve', 'interactive'])).toThrow('--approve expects strict or approve_all');
    expect(() => parseWorkerArguments(['--queue', 'redis://h:1/0', 'extra'])).toThrow('takes no positional arguments');
  });

  it('exits 2 naming an unreachable Redis, and prints its help (CLI-25, QUEUE-9)', async () => {
    const unreachable = await runCli(['--queue', 'redis://127.0.0.1:1/0'], { bin: WORKER_BIN });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('--queue redis://127.0.0.1:1/0: cannot reach Redis');
    const help = await runCli(['--help'], { bin: WORKER_BIN });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: delegate-worker --queue');
  });

  it('reads --queue-heartbeat and --queue-keep only with --queue, the keep at most a day (QUEUE-25, QUEUE-26)', () => {
    expect(parseArguments(['r.json', '--queue', 'redis://h:1/0', '--queue-heartbeat', '5', '--queue-keep', '60'], '/')).toMatchObject({
      queueHeartbeatMs: 5000,
      queueKeepSeconds: 60,
    });
    expect(() => parseArguments(['r.json', '--queue-heartbeat', '5'], '/')).toThrow('--queue-heartbeat is only for --queue <redis://...>.');
    expect(() => parseArguments(['r.json', '--queue', 'redis://h:1/0', '--queue-keep', '90000'], '/')).toThrow(
      '--queue-keep expects at most 86400 seconds (a day), got "90000".',
    );
  });

  it('exits 2 at start for a --model cassette it cannot read, before taking any job (QUEUE-23)', async () => {
    const worker = await runCli(['--queue', 'redis://127.0.0.1:1/0', '--model', 'replay:/nonexistent/cassette.json'], { bin: WORKER_BIN });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('/nonexistent/cassette.json');
  });

  it('is taken by delegate-mcp, whose calls then delegate through the queue (MCP-24), and checked as delegate-run checks it', () => {
    expect(parseMcpArguments(['requests', '--queue', 'redis://h:1/0', '--queue-name', 'agents'], process.cwd())).toMatchObject({
      run: { queue: 'redis://h:1/0', queueName: 'agents' },
    });
    expect(() => parseMcpArguments(['requests', '--queue', 'http://h:1/0'], process.cwd())).toThrow('expected a redis:// or rediss:// URL');
    expect(() => parseMcpArguments(['requests', '--queue-name', 'agents'], process.cwd())).toThrow('--queue-name is only for --queue');
  });
});
