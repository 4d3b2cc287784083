// The viewer's benchmark (VIEW-10): the page of a trace of 1,000 runs and 20,000 events, written by the build in dist/ and opened in headless Chromium.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { renderPage } from '../dist/viewer/render-page.js';
import { TraceView } from '../dist/cli/trace-view.js';
import { chromiumAvailable, launchChromium } from './chromium.js';
import { largeTrace } from './large-trace.js';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Writes the page of a large trace, then opens it five times: the time from navigation to two frames after the page has drawn. */
export async function viewerOpening({ runs = 1000, events = 20_000 } = {}) {
  const label = `viewer: ${runs.toLocaleString('en')} runs, ${events.toLocaleString('en')} events`;
  const trace = largeTrace({ runs, events });
  const started = performance.now();
  const view = new TraceView();
  for (const event of trace) view.apply(event);
  const html = renderPage(view.view('large.jsonl'));
  const build = performance.now() - started;
  const file = join(tmpdir(), `delegate-viewer-bench-${process.pid}.html`);
  writeFileSync(file, html);
  process.stdout.write(`${`${label}: page written`.padEnd(58)} ${build.toFixed(0).padStart(6)} ms · ${(html.length / 1048576).toFixed(1)} MiB\n`);
  if (!chromiumAvailable()) {
    process.stdout.write(`${`${label}: opened in Chromium`.padEnd(58)} skipped: no chromium (apt-get install chromium)\n`);
    return undefined;
  }
  const browser = await launchChromium();
  try {
    const samples = [];
    for (let i = 0; i < 5; i++) {
      const page = await browser.context.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
      // performance.now() in the page counts from its navigation: two frames after drawing, it has been painted.
      samples.push(await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now()))))));
      await page.close();
    }
    const value = median(samples);
    process.stdout.write(`${`${label}: opened in Chromium`.padEnd(58)} median ${value.toFixed(0).padStart(6)} ms (target < 2000 ms)\n`);
    return value;
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await viewerOpening();
