// OpenTelemetry loads only when export is on (spec/telemetry.md TEL-1): a plain run resolves no @opentelemetry module.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, offlineEnv, tempDir } from '../helpers/cli.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { bossOf, fanOutFolder } from '../helpers/queue-fixture.js';

const folder = tempDir();
/** A module given to `node --import`: a resolve hook that writes every @opentelemetry module resolved to $LOAD_LOG. */
const PROBE = join(folder, 'probe.mjs');
writeFileSync(
  PROBE,
  `import { register } from 'node:module';
const hooks = \`import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes('/@opentelemetry/')) appendFileSync(log, result.url + '\\\\n');
  return result;
}\`;
register('data:text/javascript,' + encodeURIComponent(hooks), { parentURL: import.meta.url, data: { log: process.env.LOAD_LOG } });
`,
);

const collector = await startOtlpReceiver();
afterAll(() => collector.close());

/** Runs delegate-run with the probe; resolves to the @opentelemetry modules it resolved. */
async function loaded(args: string[], name: string): Promise<string[]> {
  const log = join(folder, `${name}.log`);
  const child = spawn(process.execPath, ['--import', PROBE, BIN, ...args], { env: offlineEnv({ LOAD_LOG: log }), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  expect(code, stderr).toBe(0);
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
}

describe('loading OpenTelemetry', () => {
  it('resolves no @opentelemetry module in a run without export, and resolves them with --otel', async () => {
    const request = bossOf(fanOutFolder(1));
    expect(await loaded([request, '--json'], 'plain')).toEqual([]);
    expect((await loaded([request, '--json', '--otel', collector.url], 'export')).length).toBeGreaterThan(0);
  }, 30_000);
});
