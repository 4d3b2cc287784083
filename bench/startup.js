// Start-up figures (npm run bench): process wall time and peak memory of delegate-run's commands against `node -e 0`, each run several times side by side.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** The package's folder: `import('delegate-run')` resolves there by the package's own name. */
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
/** GNU time, which reports a child's peak resident memory; without it the memory figures read n/a. */
const TIME = '/usr/bin/time';

/** The commands measured: a bare node, `--version`, a model-free plan run (the executable package.json's `bin` names: the build's bundle) and the library's import. */
export const STARTUP_COMMANDS = [
  { key: 'node', label: '`node -e 0`', args: ['-e', '0'] },
  { key: 'version', label: '`delegate-run --version`', args: ['dist/bundle/run.js', '--version'] },
  {
    key: 'plan',
    label: 'model-free plan run (requests/plan/welcome.json)',
    args: ['dist/bundle/run.js', 'requests/plan/welcome.json', '--input', '{"name":"Ada"}'],
  },
  { key: 'import', label: "`import('delegate-run')`", args: ['-e', "import('delegate-run')"] },
];

/** One run of `node args`: its wall time (spawn to exit, ms), and its peak RSS (MB, 10⁶ bytes) and CPU time (ms) when GNU time is there. */
function runOnce(args) {
  const timed = existsSync(TIME);
  const command = timed ? TIME : process.execPath;
  const commandArgs = timed ? ['-f', '%M %U %S', process.execPath, ...args] : args;
  const started = performance.now();
  const child = spawnSync(command, commandArgs, { cwd: PACKAGE, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const wallMs = performance.now() - started;
  if (child.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${child.status}: ${child.stderr}`);
  if (!timed) return { wallMs, rssMB: null, cpuMs: null };
  const [rssKiB, user, system] = child.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wallMs, rssMB: (rssKiB * 1024) / 1e6, cpuMs: (user + system) * 1000 };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/**
 * Every command run `runs` times, in rounds (one run of each per round, so all see the machine as
 * it is in that moment): min and median wall time, median peak RSS and median CPU time of each.
 */
export function measureStartup(runs = 10) {
  const samples = Object.fromEntries(STARTUP_COMMANDS.map((command) => [command.key, []]));
  for (const command of STARTUP_COMMANDS) runOnce(command.args); // warm-up: the files in the page cache
  for (let round = 0; round < runs; round++) for (const command of STARTUP_COMMANDS) samples[command.key].push(runOnce(command.args));
  return Object.fromEntries(
    STARTUP_COMMANDS.map(({ key, label }) => {
      const of = (field) => samples[key].map((sample) => sample[field]);
      const known = (values) => (values.includes(null) ? null : values);
      return [
        key,
        {
          label,
          minMs: Math.min(...of('wallMs')),
          medianMs: median(of('wallMs')),
          rssMB: known(of('rssMB')) && median(of('rssMB')),
          peakRssMB: known(of('rssMB')) && Math.max(...of('rssMB')),
          cpuMs: known(of('cpuMs')) && median(of('cpuMs')),
        },
      ];
    }),
  );
}

/**
 * The start-up figures with their targets: the plan run within 0.4 s, 60 MB and 3× `node -e 0`
 * (medians side by side), `--version` within 0.2 s, the library's import as the plan run; `node -e 0` as the reading they compare with.
 */
export function startupFigures(runs = 10) {
  const measured = measureStartup(runs);
  const node = measured.node;
  const figures = [];
  const reading = (name, value, unit, note) => ({ name, value, unit, ...(note ? { note } : {}) });
  const figure = (name, value, target, unit, note) => ({ name, value, target, unit, ratio: value === null ? null : value / target, ...(note ? { note } : {}) });
  const wallNote = (item) =>
    `min ${(item.minMs / 1000).toFixed(3)} s; CPU ${item.cpuMs === null ? 'n/a' : `${(item.cpuMs / 1000).toFixed(3)} s`}; ${runs} runs`;
  figures.push(reading(`start-up: ${node.label}, wall time (median)`, node.medianMs / 1000, 's', wallNote(node)));
  figures.push(reading(`start-up: ${node.label}, peak RSS (median)`, node.rssMB, 'MB', 'the floor every command pays'));
  for (const [key, wallTarget, withRatio] of [
    ['version', 0.2, false],
    ['plan', 0.4, true],
    ['import', 0.4, true],
  ]) {
    const item = measured[key];
    figures.push(figure(`start-up: ${item.label}, wall time (median)`, item.medianMs / 1000, wallTarget, 's', wallNote(item)));
    if (!withRatio) continue;
    figures.push(
      figure(
        `start-up: ${item.label}, peak RSS (median)`,
        item.rssMB,
        60,
        'MB',
        item.peakRssMB === null ? undefined : `highest ${item.peakRssMB.toFixed(1)} MB`,
      ),
    );
    figures.push(figure(`start-up: ${item.label} / ${node.label}, wall time (medians)`, item.medianMs / node.medianMs, 3, '×'));
    if (item.cpuMs !== null)
      figures.push(
        reading(
          `start-up: ${item.label} / ${node.label}, CPU time (medians)`,
          item.cpuMs / node.cpuMs,
          '×',
          'a reading: steadier than wall time on a busy machine',
        ),
      );
  }
  return figures;
}
