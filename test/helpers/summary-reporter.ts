// A vitest reporter that ends the run with one plain line, "N passed, M failed" (", K skipped"), for CI logs, after the suites that were skipped (their names say why).
import type { Reporter, TestModule } from 'vitest/node';

/** Counts every test of the run by its final state and prints the closing line. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedSuites = new Set<string>();
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else {
          skipped++;
          let suite = test.parent;
          while (suite.type === 'suite' && suite.parent.type === 'suite') suite = suite.parent;
          if (suite.type === 'suite') skippedSuites.add(`${module.moduleId.replace(`${process.cwd()}/`, '')}: ${suite.name}`);
        }
      }
      // A file that failed to load has no tests to count but is a failure all the same.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    for (const suite of skippedSuites) process.stdout.write(`\nskipped: ${suite}`);
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }
}
