// Test runner settings: end-to-end tests spawn the built CLI, so they get room beyond vitest's 5 s default.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep parallel test files to what the machine can run without starving spawned CLIs.
    maxWorkers: 2,
    // The default report, then one plain closing line ("N passed, M failed") for CI logs.
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
