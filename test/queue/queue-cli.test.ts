// The command lines of the queue without Redis: delegate-worker's usage errors and help, and delegate-mcp refusing --queue (CLI-24, CLI-25, MCP-8).
import { describe, expect, it } from 'vitest';
import { parseMcpArguments } from '../../src/cli/mcp.js';
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
    expect(parseWorkerArguments(['--queue', 'redis://h:1/0'])).toMatchObject({ approve: 'strict', activities: [] });
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

  it('is refused by delegate-mcp, whose tools run in its own process (MCP-8)', () => {
    expect(() => parseMcpArguments(['requests', '--queue', 'redis://h:1/0'], process.cwd())).toThrow('--queue is not an option of delegate-mcp');
  });
});
