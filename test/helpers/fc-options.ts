// fast-check settings shared by the property tests: one fixed seed, a number of runs the environment may raise.
import type { Parameters } from 'fast-check';

/**
 * Settings for `fc.assert`: a fixed seed so CI is deterministic, and `numRuns` runs unless
 * FC_SEED / FC_NUM_RUNS in the environment say otherwise (to explore, e.g. `FC_NUM_RUNS=10000 npm test`).
 */
export function fcOptions(numRuns: number): { seed: number; numRuns: number } {
  return {
    seed: Number(process.env.FC_SEED ?? 42),
    numRuns: Number(process.env.FC_NUM_RUNS ?? numRuns),
  } satisfies Parameters<unknown>;
}
