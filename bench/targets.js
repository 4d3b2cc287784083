// The figures of issue 14 with their targets (npm run bench): fan-out against the critical path, the journal's cost, overhead per model call, prompt economy against the Vercel AI SDK, scale, and the cost of the progress tree and trace writer. Figures, never tests.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bareSdkFanOut, criticalPathMs, delegateRunFanOut, overheadPerCall, startLoopback } from './fan-out.js';
import { servingFigures } from './serving.js';

/** The middle value (the upper one of an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/** One figure: its value, the target beside it, and the ratio of value to target (at most 1 meets it, unless the note says "at least the target"). */
function figure(name, value, target, unit, note) {
  return { name, value, target, unit, ratio: value / target, ...(note ? { note } : {}) };
}

/** Fan-out at 200 ms: 100 delegates (target 1.10× the critical path) and 1,000 (1.25×, bounds raised). */
async function fanOutFigures(latencyMs) {
  const figures = [];
  for (const [tasks, target, bounds] of [
    [100, 1.1, {}],
    [1000, 1.25, { maxConcurrency: 1000, maxRuns: 1100 }],
  ]) {
    const loopback = await startLoopback({ latencyMs, tasks });
    try {
      const ratios = [];
      const floors = [];
      const cpuPerDelegate = [];
      let last;
      // Warmed up first, as a long-lived process is: the first run also pays for loading the SDK, compiling, and the connections.
      await bareSdkFanOut(loopback, tasks);
      await delegateRunFanOut(loopback, tasks, bounds);
      // Each round runs the floor (the SDK alone) and then delegate-run, so both see the machine as it is in that minute.
      for (let i = 0; i < (tasks <= 100 ? 7 : 3); i++) {
        floors.push((await bareSdkFanOut(loopback, tasks)).ms / criticalPathMs(latencyMs));
        last = await delegateRunFanOut(loopback, tasks, bounds);
        ratios.push(last.ms / criticalPathMs(latencyMs));
        cpuPerDelegate.push(last.cpuMs / tasks);
      }
      figures.push(
        figure(
          `fan-out: ${tasks} delegates, time / critical path (median of ${ratios.length})`,
          median(ratios),
          target,
          '×',
          `best ${Math.min(...ratios).toFixed(3)}×`,
        ),
      );
      figures.push({
        name: `fan-out: ${tasks} delegates, the openai SDK alone on the same workload (the floor, median of ${floors.length})`,
        value: median(floors),
        unit: '×',
        note: `a reading: no framework, Promise.all over the SDK, unstreamed; best ${Math.min(...floors).toFixed(3)}×`,
      });
      figures.push({
        name: `fan-out: ${tasks} delegates, delegate-run / the floor (medians)`,
        value: median(ratios) / median(floors),
        unit: '×',
        note: 'a reading: 1 is as fast as the SDK alone',
      });
      // CPU per delegate counts this process's own time, so it is the steadier reading when wall times move with the machine.
      figures.push({
        name: `fan-out: ${tasks} delegates, CPU per delegate (median of ${cpuPerDelegate.length})`,
        value: median(cpuPerDelegate),
        unit: 'ms',
        note: 'a reading: this process only, every thread',
      });
      if (tasks === 100) {
        figures.push(
          figure(
            'fan-out: 100 delegates, prompt characters per worker call',
            last.byKind.worker.promptChars / last.byKind.worker.requests,
            1,
            'chars',
            'no target: a reading',
          ),
        );
        figures.push({ name: 'fan-out: 100 delegates, prompt characters in all', value: last.promptChars, unit: 'chars', requests: last.requests });
      }
    } finally {
      await loopback.close();
    }
  }
  return figures;
}

/**
 * The journal's cost (JOURNAL-13): the fan-out of 100 and of 1,000 delegates at 200 ms with and
 * without a journal, side by side in each round (their order swapped every round, so neither gains
 * from going second): the medians of the rounds' time ratios and CPU ratios, beside their targets.
 */
export async function journalFigures(latencyMs) {
  const figures = [];
  const temp = mkdtempSync(join(tmpdir(), 'bench-journal-'));
  try {
    for (const [tasks, bounds] of [
      [100, {}],
      [1000, { maxConcurrency: 1000, maxRuns: 1100 }],
    ]) {
      const loopback = await startLoopback({ latencyMs, tasks });
      try {
        const journaled = { ...bounds, journal: join(temp, `fan-out-${tasks}.jsonl`) };
        await delegateRunFanOut(loopback, tasks, bounds);
        await delegateRunFanOut(loopback, tasks, journaled);
        const times = [];
        const cpus = [];
        for (let round = 0; round < (tasks <= 100 ? 7 : 3); round++) {
          const pair = {};
          for (const side of round % 2 === 0 ? ['plain', 'journal'] : ['journal', 'plain']) {
            pair[side] = await delegateRunFanOut(loopback, tasks, side === 'journal' ? journaled : bounds);
          }
          times.push(pair.journal.ms / pair.plain.ms);
          cpus.push(pair.journal.cpuMs / pair.plain.cpuMs);
        }
        const width = tasks.toLocaleString('en');
        figures.push(
          figure(
            `journal: ${width} delegates, time with --journal / without (median of ${times.length})`,
            median(times),
            1.15,
            '×',
            `best ${Math.min(...times).toFixed(3)}×`,
          ),
        );
        figures.push(
          figure(
            `journal: ${width} delegates, CPU with --journal / without (median of ${cpus.length})`,
            median(cpus),
            1.5,
            '×',
            `best ${Math.min(...cpus).toFixed(3)}×`,
          ),
        );
      } finally {
        await loopback.close();
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return figures;
}

/** Prompt characters of the Vercel AI SDK on the same workload, when bench/peers is installed (npm run bench:peers installs it). */
async function vercelPromptChars(tasks) {
  if (!existsSync(resolve('bench/peers/node_modules/ai'))) return undefined;
  const { vercelFanOut } = await import('./peers/vercel.js');
  const loopback = await startLoopback({ latencyMs: 0, tasks });
  try {
    await loopback.reset(tasks);
    await vercelFanOut(loopback.url)();
    return (await loopback.stats()).promptChars;
  } finally {
    await loopback.close();
  }
}

/** A plan of `size` independent latent calls: run time and the heap it leaves in use. */
async function planFigures() {
  const { Runtime, ReplayModel } = await import('../dist/index.js');
  const runtime = new Runtime();
  const model = new ReplayModel([{ solution: { calls: [], output: 'done' }, repeat: true }]);
  const times = {};
  let heapMiB = 0;
  for (const size of [1000, 10000, 50000]) {
    const calls = Array.from({ length: size }, (_, i) => ({ _tool: 'step', x: i, _output: i, _outputPath: `†state.v${i}` }));
    const text = JSON.stringify({
      meta: { name: 'plan' },
      context: [
        { type: 'tool', tool: { step: { properties: { x: {} }, _output: {} } } },
        { type: 'plan', calls },
      ],
      schema: {},
    });
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 5);
    const started = performance.now();
    const result = await runtime.run(runtime.parse(text, 'plan.json'), { model });
    times[size] = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    if (!result.ok) throw result.error;
    if (size === 10000) heapMiB = peak / 1048576;
  }
  return [
    figure('scale: 10,000-call plan, heap in use at its peak (sampled)', heapMiB, 200, 'MiB'),
    figure('scale: 50,000 / 1,000-call plan time (linear: 50)', times[50000] / times[1000], 50, '×'),
    figure('scale: 10,000 / 1,000-call plan time (linear: 10)', times[10000] / times[1000], 10, '×'),
  ];
}

/** The modules of the progress view (live tree, cost tree, summary) and of the trace file. */
const OBSERVER_MODULES = 'cli/(progress|report)/(progress|tree-renderer|run-tree|run-index|cost-tree|cost-report|summary)|files/(jsonl-file-sink|batched-log)';
const OBSERVERS = new RegExp(`/dist/(${OBSERVER_MODULES})\\.js$`);
/** The same, and the building of the events. */
const TRACING = new RegExp(`/dist/(protocol/trace/trace|${OBSERVER_MODULES})\\.js$`);
/** The trace file's writer alone: serialising and writing the events the trace contract fixes. */
const TRACE_FILE = /\/dist\/files\/(jsonl-file-sink|batched-log)\.js$/;

/**
 * The progress tree, the cost tree and the JSONL trace writer on a run tree of 1,000 delegates: their
 * share of the main thread's CPU time, read from a CPU profile of three runs with all of them
 * listening (after a warm-up): the samples taken inside their modules against every sample that was
 * not idle. The difference of the CPU times of runs with and without them was tried first; one such
 * run's CPU time varies by a third from run to run on a shared machine, so that difference read
 * anything from 0% to 15% for the same code. Timing each listener call cost more than the listeners.
 */
export async function observerShareFigure(latencyMs) {
  const { OpenAIModel, Tracer, createRuntime } = await import('../dist/index.js');
  const { createProgress } = await import('../dist/cli/progress/progress.js');
  const { jsonlFileSink } = await import('../dist/files/jsonl-file-sink.js');
  const { Session } = await import('node:inspector/promises');
  const folder = resolve('bench/fan-out');
  const loopback = await startLoopback({ latencyMs, tasks: 1000 });
  const temp = mkdtempSync(join(tmpdir(), 'bench-trace-'));
  const session = new Session();
  try {
    const runtime = createRuntime({ root: folder });
    const model = new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${loopback.url}/v1`, env: {} });
    let runs = 0;
    // As delegate-run --trace does on a terminal: the live tree, the cost tree and the summary (createProgress), and the trace file.
    const observedRun = async () => {
      const stream = { isTTY: true, columns: 120, rows: 40, write: () => true };
      const sink = jsonlFileSink(join(temp, `trace-${runs++}.jsonl`));
      const tracer = new Tracer([sink]);
      const progress = createProgress(tracer, stream, { env: {} });
      const request = await runtime.load(resolve(folder, 'orchestrator.json'));
      const result = await runtime.run(request, { model, tracer, maxConcurrency: 1000, maxRuns: 1100 });
      progress.finish(result);
      sink.close();
      if (!result.ok) throw new Error(result.error.message);
    };
    await observedRun();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 250 });
    await session.post('Profiler.start');
    for (let round = 0; round < 3; round++) await observedRun();
    const { profile } = await session.post('Profiler.stop');
    const share = (pattern) => profileShare(profile, pattern);
    return [
      figure('observers: progress tree + trace writer, share of the run CPU (1,000 delegates)', share(OBSERVERS), 5, '%'),
      {
        name: 'of which the trace file: its events serialised and written, share of the run CPU (1,000 delegates)',
        value: share(TRACE_FILE),
        unit: '%',
        note: 'a reading: what the trace contract fixes (every event, whole), on this machine',
      },
      {
        name: 'tracing in all: events built + progress tree + trace writer, share of the run CPU (1,000 delegates)',
        value: share(TRACING),
        unit: '%',
        note: 'a reading: a run without listeners builds no events',
      },
    ];
  } finally {
    session.disconnect();
    rmSync(temp, { recursive: true, force: true });
    await loopback.close();
  }
}

/** The percentage of a CPU profile's busy samples (not idle) taken with a function of a module matching `pattern` on the stack. */
function profileShare(profile, pattern) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const inModules = new Map();
  const within = (id) => {
    if (id === undefined) return false;
    let known = inModules.get(id);
    if (known === undefined) {
      known = pattern.test(nodes.get(id).callFrame.url) || within(parents.get(id));
      inModules.set(id, known);
    }
    return known;
  };
  let busy = 0;
  let matched = 0;
  profile.samples.forEach((id, index) => {
    if (nodes.get(id).callFrame.functionName === '(idle)') return;
    const ms = profile.timeDeltas[index] ?? 0;
    busy += ms;
    if (within(id)) matched += ms;
  });
  return busy === 0 ? 0 : (100 * matched) / busy;
}

/** Every figure of issue 14, with its target. */
export async function targetFigures({ latencyMs = 200 } = {}) {
  const figures = await fanOutFigures(latencyMs);
  figures.push(...(await journalFigures(latencyMs)));
  const fast = await startLoopback({ latencyMs: 0, tasks: 1 });
  try {
    const { oursMs, bareMs } = await overheadPerCall(fast, 300);
    figures.push(figure('overhead per model call above a bare openai SDK loop', oursMs - bareMs, 0.5, 'ms'));
  } finally {
    await fast.close();
  }
  const vercel = await vercelPromptChars(100);
  const ours = figures.find((item) => item.name === 'fan-out: 100 delegates, prompt characters in all');
  if (vercel !== undefined) figures.push(figure('prompt characters / the Vercel AI SDK on the fan-out', ours.value / vercel, 1.5, '×'));
  else
    figures.push({
      name: 'prompt characters / the Vercel AI SDK on the fan-out',
      value: null,
      target: 1.5,
      unit: '×',
      note: 'run npm run bench:peers once to install the peers',
    });
  figures.push(...(await planFigures()));
  figures.push(...(await observerShareFigure(latencyMs)));
  const serving = await servingFigures();
  // A ratio at least 1 meets this target: the figure is delegate-serve's share of Node's rate.
  figures.push(
    figure('serving: delegate-serve / Node static server, requests per second', serving.oursRps / serving.staticRps, 0.8, '×', 'at least the target'),
  );
  figures.push(
    figure('serving: delegate-serve ETag hits / Node static server, requests per second', serving.hitsRps / serving.staticRps, 0.8, '×', 'at least the target'),
  );
  return figures;
}

/** The figures as lines: name, value, target and ratio. */
export function formatFigures(figures) {
  return figures.map((item) => {
    const value = item.value === null ? 'n/a' : `${Number(item.value.toFixed(item.value < 10 ? 3 : 1))} ${item.unit}`;
    const target = item.target === undefined || item.note === 'no target: a reading' ? '' : ` · target ${item.target} ${item.unit}`;
    const ratio = item.ratio === undefined || item.value === null || target === '' ? '' : ` · ratio to target ${item.ratio.toFixed(2)}`;
    return `${item.name.padEnd(80)} ${value}${target}${ratio}${item.note && item.note !== 'no target: a reading' ? ` (${item.note})` : ''}`;
  });
}
