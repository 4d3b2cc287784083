// The viewer's example traces, written by real runs of the built CLI (replayed, offline): a tree, a failure with re-asks, approvals, tiers with prices.
import { join } from 'node:path';
import { runCli, tempDir } from './cli.js';

/** The examples by name, and the arguments of the run that writes each trace. */
export const EXAMPLES = {
  /** requests/music: producer → composer → sound-designer, and a sound-designer in parallel. */
  music: ['requests/music/producer.json', '--input', '{"brief":"a sad ballad","ambience":"rain on a window"}'],
  /** An editor whose checker never answers valid JSON: re-asked twice, it fails with invalid_model_output. */
  editor: ['test/fixtures/viewer/editor.json'],
  /** Two sends that need approval, refused in strict mode. */
  approvals: ['test/fixtures/approval/request.json', '--activities', 'test/fixtures/approval/activities.mjs', '--approve', 'strict'],
  /** A planner on gpt-4.1 with two workers on the fast tier, priced. */
  costs: ['test/fixtures/costs/planner.json'],
} as const;

/** An example's name. */
export type ExampleName = keyof typeof EXAMPLES;

/** Runs every example once into a fresh folder; resolves to the trace path of each. */
export async function writeExampleTraces(): Promise<Record<ExampleName, string>> {
  const folder = tempDir('delegate-view-');
  const entries = await Promise.all(
    (Object.keys(EXAMPLES) as ExampleName[]).map(async (name) => {
      const trace = join(folder, `${name}.jsonl`);
      const result = await runCli([...EXAMPLES[name], '--trace', trace, '--quiet']);
      if (result.code !== 0) throw new Error(`The ${name} example failed (${result.code}): ${result.stderr}`);
      return [name, trace] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<ExampleName, string>;
}
