// Benchmark of tier routing (spec/delegate-tool.md DEL-23 to DEL-28): one scripted planner workload run
// twice — planner and workers on the deep tier, then planner on deep and workers on fast — priced
// with the shipped catalog (genai-prices, MODEL-18). Reports the dollar ratio and the wall time the
// second arm adds; never judges.
import { performance } from 'node:perf_hooks';
import { ModelCatalog, ModelProviders, Tracer, createRuntime } from '../dist/index.js';

/** The workload: the planner's steps, each delegating these tasks to the fast tier, then its answer. */
const ROUNDS = [
  ['Rename getUsr to getUser in the snippet.', 'Reformat the changelog dates as ISO 8601.', 'Write a regex for ticket ids like AUTH-101.'],
  ['Sort the import lines alphabetically.', 'Turn the TODO comments into a checklist.', 'Convert the config keys to camelCase.'],
];
/** Tokens of each answer, the same in both arms (what is compared is the price of the same work). */
const PLANNER_USAGE = { inputTokens: 3000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };
const WORKER_USAGE = { inputTokens: 800, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0 };
const PLANNER_MODEL = 'openai:gpt-5';

const planner = {
  meta: { name: 'planner' },
  config: { model: PLANNER_MODEL },
  context: [{ type: 'system', text: 'Prepare the release: hand each mechanical sub-task to a fast worker.' }],
  schema: { type: 'string' },
};

/** The scripted answer to a model call: the planner delegates each round, then answers; a worker answers at once. */
function answer(request) {
  if (request.requestName !== 'planner') return { solution: { calls: [], output: 'done' }, usage: WORKER_USAGE };
  const round = ROUNDS[request.step];
  if (!round) return { solution: { calls: [], output: 'released' }, usage: PLANNER_USAGE };
  const calls = round.map((task, index) => ({
    _tool: 'delegate',
    tier: 'fast',
    task,
    context: { mode: 'minimal' },
    _outputPath: `†state.r${request.step}_${index}`,
  }));
  return { solution: { calls, output: null }, usage: PLANNER_USAGE };
}

/** Providers whose `openai:` models answer from the script, priced by the catalog as the live provider prices them. */
function scriptedProviders(catalog) {
  const providers = new ModelProviders({ registry: catalog, builtins: false });
  providers.register('openai', (name) => {
    const id = `openai:${name}`;
    return {
      id,
      async generate(request) {
        const { solution, usage } = answer(request);
        return { text: JSON.stringify(solution), solution, model: id, usage, costUsd: catalog.costOf(id, usage) };
      },
    };
  });
  return providers;
}

/** Runs the workload once with `tiers` overrides; its dollars, wall time and the models that answered. */
async function runOnce(catalog, tiers) {
  const providers = scriptedProviders(catalog);
  const runtime = createRuntime({ root: process.cwd(), models: { providers, options: { cwd: process.cwd(), env: {} }, tiers } });
  const workers = new Set();
  const tracer = new Tracer([(event) => event.event === 'delegate.started' && workers.add(event.model)]);
  const started = performance.now();
  const result = await runtime.run(runtime.validate(planner), { model: providers.create(PLANNER_MODEL, { cwd: process.cwd(), env: {} }), tracer });
  const ms = performance.now() - started;
  if (!result.ok) throw result.error;
  return { costUsd: result.usageTotal.costUsd, ms, workers: [...workers] };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Both arms, `repeat` times each, interleaved after a warm-up so neither pays for the other's JIT; medians reported. */
export async function tierDelegation(repeat = 21) {
  const catalog = ModelCatalog.load({ env: {}, warn: () => {} });
  const arms = { 'all deep': { fast: PLANNER_MODEL }, 'planner deep, workers fast': {} };
  const runs = Object.fromEntries(Object.keys(arms).map((label) => [label, []]));
  for (let i = 0; i < 5; i++) for (const tiers of Object.values(arms)) await runOnce(catalog, tiers);
  for (let i = 0; i < repeat; i++) for (const [label, tiers] of Object.entries(arms)) runs[label].push(await runOnce(catalog, tiers));
  const measured = {};
  for (const label of Object.keys(arms)) {
    const first = runs[label][0];
    measured[label] = { costUsd: first.costUsd, ms: median(runs[label].map((run) => run.ms)), workers: first.workers };
    process.stdout.write(
      `${`tiers: ${label} (workers on ${measured[label].workers.join(', ')})`.padEnd(58)} $${measured[label].costUsd.toFixed(5)} · median ${measured[label].ms.toFixed(1)} ms\n`,
    );
  }
  const deep = measured['all deep'];
  const mixed = measured['planner deep, workers fast'];
  const tasks = ROUNDS.flat().length;
  process.stdout.write(
    `${`tiers: dollar ratio, ${tasks} sub-tasks (mixed / all deep)`.padEnd(58)} ${(mixed.costUsd / deep.costUsd).toFixed(3)} (${((1 - mixed.costUsd / deep.costUsd) * 100).toFixed(0)}% saved)\n`,
  );
  process.stdout.write(`${'tiers: added wall time (mixed − all deep, no provider latency)'.padEnd(58)} ${(mixed.ms - deep.ms).toFixed(1)} ms\n`);
  return { deep, mixed };
}

if (import.meta.url === `file://${process.argv[1]}`) await tierDelegation();
