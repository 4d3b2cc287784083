// Benchmark of the run-tree bounds (DEL-19): a self-delegating fan-out of 10 at the default bounds, once. Reports, never judges.
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReplayModel, Tracer, createRuntime } from '../dist/index.js';

/** Runs test/fixtures/fan-out/fan.json (10 children per run, default depth 5: 111,111 runs unbounded) once. */
export async function fanOutAtDefaults() {
  const folder = resolve('test/fixtures/fan-out');
  const runtime = createRuntime({ root: folder });
  const request = await runtime.load(resolve(folder, 'fan.json'));
  const model = await ReplayModel.fromFile(resolve(folder, 'fan.cassette.json'));
  let runs = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const tracer = new Tracer([
    (event) => {
      if (event.event === 'run.started') runs++;
      if (event.event === 'model.request') mostInFlight = Math.max(mostInFlight, ++inFlight);
      if (event.event === 'model.response') inFlight--;
    },
  ]);
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const result = await runtime.run(request, { model, tracer });
  const ms = performance.now() - started;
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 1048576;
  const outcome = result.ok ? 'completed' : result.error.code;
  process.stdout.write(
    `${'run tree: fan-out 10 at the default bounds'.padEnd(58)} ${runs} runs, ${mostInFlight} model calls in flight at most, ${outcome}, ${ms.toFixed(0)} ms, heap change ${heapMiB >= 0 ? '+' : ''}${heapMiB.toFixed(1)} MiB (after GC runs in between, so it can be negative)\n`,
  );
}
