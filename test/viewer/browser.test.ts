/** The viewer's pages opened in headless Chromium (spec/viewer.md): the DOM of the tree, the timeline, the cost, the model calls and the approvals, and no network request at all. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumAvailable, launchChromium } from '../../bench/chromium.js';
import { largeTrace } from '../../bench/large-trace.js';
import { main } from '../../src/cli/run.js';
import { fakePipe } from '../cli/fake-terminal.js';
import { readTrace, tempDir } from '../helpers/cli.js';
import { type ExampleName, writeExampleTraces } from '../helpers/example-traces.js';
import { WIDE_ROOT, wideTrace } from '../helpers/wide-trace.js';

/** Screenshots of every example page, kept for people to look at (gitignored). */
const ARTIFACTS = resolve('test-artifacts');

/** The pages under test: the examples, a trace killed mid-write, a hostile one, a large one and a wide fan-out. */
type PageName = ExampleName | 'killed' | 'hostile' | 'large' | 'wide';

let traces: Record<PageName, string>;
let pages: Record<PageName, string>;
let browser: { context: BrowserContext; close(): Promise<void> } | undefined;

/** Writes the page of a trace with `delegate-run view`. */
async function writePage(trace: string): Promise<string> {
  const out = trace.replace(/\.jsonl$/, '.html');
  const stderr = fakePipe();
  const status = await main(['view', trace, '--out', out], { stdout: fakePipe(), stderr, env: {}, cwd: process.cwd() });
  if (status !== 0) throw new Error(`view failed: ${stderr.text()}`);
  return out;
}

/** Opens a page; resolves once it has drawn, with every request it made and every script error. */
async function open(name: PageName): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await (browser as { context: BrowserContext }).context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(pathToFileURL(pages[name]).href);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
  return { page, requests, errors };
}

/** The texts of every element a selector matches. */
function texts(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).allTextContents();
}

/** A number attribute of every element a selector matches. */
function numbers(page: Page, selector: string, attribute: string): Promise<number[]> {
  return page.locator(selector).evaluateAll((elements, name) => elements.map((element) => Number(element.getAttribute(name))), attribute);
}

/** The first event of a trace that `matches`, typed as the test reads it. */
function eventOf<T>(trace: string, matches: (event: Record<string, unknown>) => boolean): T {
  return readTrace(trace).find(matches) as unknown as T;
}

function usageTotalOf(trace: string): Record<string, number> {
  return readTrace(trace).find((event) => event.event === 'run.completed' && event.parent === null)?.usageTotal as Record<string, number>;
}

const available = chromiumAvailable();

const title = available
  ? 'the trace viewer in headless Chromium'
  : `the trace viewer in headless Chromium, skipped: no browser at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;

describe.skipIf(!available)(title, () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const examples = await writeExampleTraces();
    const folder = tempDir('viewer-pages-');
    const killed = join(folder, 'killed.jsonl');
    const lines = readFileSync(examples.music, 'utf8').trim().split('\n');
    // A run killed mid-write: its trace stops within a line, while runs are still going.
    writeFileSync(killed, `${lines.slice(0, 14).join('\n')}\n${(lines[14] as string).slice(0, 50)}`);
    const hostile = join(folder, 'hostile.jsonl');
    const sneaky = `</script><script>fetch('http://127.0.0.1:9/leak')</script><img src="http://127.0.0.1:9/pixel.png"> \u2028 <!-- end`;
    const base = { run: 'run_h', parent: null, depth: 0 };
    const events = [
      { ts: '2026-01-01T12:00:00.000Z', event: 'run.started', ...base, request: 'hostile.json', name: sneaky, model: 'replay:x.json', input: null },
      {
        ts: '2026-01-01T12:00:00.010Z',
        event: 'model.request',
        ...base,
        step: 0,
        attempt: 0,
        messages: [{ role: 'user', content: sneaky }],
        schema: { description: sneaky },
      },
      {
        ts: '2026-01-01T12:00:00.020Z',
        event: 'approval.requested',
        ...base,
        call: '0.0',
        tool: 'write_file',
        params: {
          path: `out/${sneaky}.md`,
          content: 'x'.repeat(200),
          _activity: '@write-file',
          _sandboxes: { out: { path: 'FIXED-META-NOT-SHOWN', mode: 'rw' } },
        },
      },
      {
        ts: '2026-01-01T12:00:00.030Z',
        event: 'approval.decided',
        ...base,
        call: '0.0',
        tool: 'write_file',
        decision: 'rejected',
        reason: sneaky,
        by: 'policy:strict',
      },
    ];
    writeFileSync(hostile, `${events.map((event) => JSON.stringify(event)).join('\n')}\n`);
    const large = join(folder, 'large.jsonl');
    writeFileSync(
      large,
      `${largeTrace({ runs: 1000, events: 20_000 })
        .map((event) => JSON.stringify(event))
        .join('\n')}\n`,
    );
    const wide = join(folder, 'wide.jsonl');
    writeFileSync(
      wide,
      `${wideTrace(1000)
        .map((event) => JSON.stringify(event))
        .join('\n')}\n`,
    );
    traces = { ...examples, killed, hostile, large, wide };
    pages = Object.fromEntries(await Promise.all(Object.entries(traces).map(async ([name, trace]) => [name, await writePage(trace)]))) as Record<
      PageName,
      string
    >;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it.each(['music', 'editor', 'approvals', 'costs', 'killed', 'hostile', 'large', 'wide'] as const)(
    'makes no network request: the %s page loads only its own file',
    async (name) => {
      const { page, requests, errors } = await open(name);
      // Open model calls and calls too, so their bodies are drawn.
      for (const summary of (await page.locator('details summary:visible').all()).slice(0, 4)) await summary.click();
      await page.waitForTimeout(50);
      expect(requests).toEqual([pathToFileURL(pages[name]).href]);
      expect(errors).toEqual([]);
      await page.close();
    },
    60_000,
  );

  it('draws the music tree: every run with its name, model, status, steps, tokens and dollars, children under parents', async () => {
    const { page } = await open('music');
    const events = readTrace(traces.music);
    // The producer's two delegations start in parallel, so either may come first (depth first, the composer's own child follows it).
    expect(await texts(page, 'li.run > .row .name')).toSatisfy((names: string[]) =>
      [
        ['producer', 'composer', 'sound-designer', 'sound-designer'],
        ['producer', 'sound-designer', 'composer', 'sound-designer'],
      ].some((order) => order.join() === names.join()),
    );
    expect(await texts(page, 'li.run > .row .status')).toEqual(Array(4).fill('completed'));
    expect(await texts(page, 'li.run > .row .model')).toEqual(Array(4).fill('replay:producer.cassette.json'));
    expect((await texts(page, '#tree > li > ul > li > .row .name')).sort()).toEqual(['composer', 'sound-designer']);
    const answers = (run: string) => events.filter((event) => event.event === 'model.response' && event.run === run);
    const runs = events.filter((event) => event.event === 'run.started').map((event) => event.run);
    const order = await page.locator('li.run').evaluateAll((items) => items.map((item) => item.getAttribute('data-run')));
    expect([...order].sort()).toEqual([...runs].sort());
    const tokens = order.map((run) =>
      answers(run as string).reduce(
        (sum, event) => sum + (event.usage as { inputTokens: number }).inputTokens + (event.usage as { outputTokens: number }).outputTokens,
        0,
      ),
    );
    expect(await numbers(page, 'li.run > .row .tokens', 'data-value')).toEqual(tokens);
    expect(await numbers(page, 'li.run > .row .steps', 'data-value')).toEqual(
      order.map((run) => new Set(answers(run as string).map((event) => event.step)).size),
    );
    expect(await page.locator('li.failed-path').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-music.png'), fullPage: true });
    await page.close();
  });

  it('collapses and expands a run of the tree', async () => {
    const { page } = await open('music');
    const composer = page.locator('li.run > .row .name', { hasText: 'composer' });
    await page.locator('#tree > li > .row .toggle').click();
    await expect.poll(() => composer.isVisible()).toBe(false);
    await page.locator('#tree > li > .row .toggle').click();
    await expect.poll(() => composer.isVisible()).toBe(true);
    await page.close();
  });

  it('draws the timeline: a bar per run in order of start, per model call and per call, on one axis', async () => {
    const { page } = await open('music');
    const events = readTrace(traces.music);
    const starts = await numbers(page, '.bar-run', 'data-start');
    expect(starts).toHaveLength(4);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    const labels = await texts(page, '.lane-row > .label .lane-name');
    expect(labels[0]).toBe('producer');
    expect([...labels].sort()).toEqual(['composer', 'producer', 'sound-designer', 'sound-designer']);
    expect(await page.locator('.bar-model').count()).toBe(events.filter((event) => event.event === 'model.request').length);
    expect(await page.locator('.bar-call').count()).toBe(events.filter((event) => event.event === 'call.started').length);
    // Parallel delegations overlap on the axis: the direct sound designer runs while the composer does.
    const boxes = await page
      .locator('.bar-run')
      .evaluateAll((bars) => bars.map((bar) => bar.getBoundingClientRect()).map(({ left, right }) => ({ left, right })));
    const runsOf = await page
      .locator('.bar-run')
      .evaluateAll((bars) => bars.map((bar) => bar.closest('.lane-row')?.querySelector('.label .lane-name')?.textContent ?? ''));
    const composer = boxes[runsOf.indexOf('composer')];
    // Lanes are in order of start: the direct sound designer starts before the composer's own one.
    const direct = boxes[runsOf.indexOf('sound-designer')];
    expect(direct?.left).toBeLessThan(composer?.right ?? 0);
    expect(await page.locator('.bar-run.critical').count()).toBe(3);
    await page.close();
  });

  it('shows a bar’s details on hover, and opens what it stands for on click', async () => {
    const { page } = await open('music');
    await page.locator('.bar-model').first().hover();
    await expect.poll(() => page.locator('#tooltip').isVisible()).toBe(true);
    const tooltip = (await page.locator('#tooltip').textContent()) ?? '';
    expect(tooltip).toContain('model call, step 0, attempt 0 · replay:producer.cassette.json · 640 in / 88 out');
    const melody = eventOf<{ params: unknown }>(traces.music, (event) => event.event === 'call.started' && event.tool === 'melody');
    await page.locator('.lane-row', { hasText: 'composer' }).locator('.bar-call').first().click();
    const opened = page.locator('#details details.call[open]');
    await expect.poll(() => opened.count()).toBe(1);
    expect(await page.locator('.run-details h3').textContent()).toMatch(/^composer/);
    expect(JSON.parse((await opened.locator('pre.params').textContent()) ?? '')).toEqual(melody.params);
    await page.close();
  });

  it('expands a model call to show the exact messages sent, the Solution schema and the answer', async () => {
    const { page } = await open('music');
    const request = eventOf<{ messages: { role: string; content: string }[]; schema: unknown }>(traces.music, (event) => event.event === 'model.request');
    const response = eventOf<{ solution: unknown }>(traces.music, (event) => event.event === 'model.response');
    await page.locator('#details details.exchange summary').first().click();
    const body = page.locator('#details details.exchange').first();
    await expect.poll(() => body.locator('.message').count()).toBe(request.messages.length);
    expect(await body.locator('.message .role').allTextContents()).toEqual(request.messages.map((message) => message.role));
    expect(await body.locator('.message pre').allTextContents()).toEqual(request.messages.map((message) => message.content));
    expect(JSON.parse((await body.locator('details.schema pre').textContent()) ?? '')).toEqual(request.schema);
    expect(JSON.parse((await body.locator('pre.answer').textContent()) ?? '')).toEqual(response.solution);
    await page.close();
  });

  it('opens a call with its parameters and result, and follows its delegation to the child run', async () => {
    const { page } = await open('music');
    const started = eventOf<{ params: unknown }>(traces.music, (event) => event.event === 'call.started' && event.tool === 'compose');
    await page.locator('#details details.call', { hasText: 'compose' }).locator('summary').click();
    const call = page.locator('#details details.call[open]');
    expect(JSON.parse((await call.locator('pre.params').textContent()) ?? '')).toEqual(started.params);
    expect(await call.locator('pre.result').count()).toBe(1);
    await call.locator('a.run-link').click();
    await expect.poll(() => page.locator('.run-details h3').textContent()).toMatch(/^composer/);
    await page.close();
  });

  it('highlights the failed path, and shows each re-ask with its reason', async () => {
    const { page } = await open('editor');
    expect(await texts(page, 'li.failed-path > .row .name')).toEqual(['editor', 'checker']);
    expect(await page.locator('li.run[data-status="failed"] > .row .status').textContent()).toBe('failed invalid_model_output');
    await page.locator('li.run[data-status="failed"] > .row .name').click();
    expect(await page.locator('.run-details .error').textContent()).toMatch(/^invalid_model_output: The model's answer did not match/);
    expect(await texts(page, '#details details.exchange > summary')).toEqual([
      expect.stringMatching(/^step 0 · openai:gpt-4.1-nano .* not JSON$/),
      expect.stringMatching(/^step 0 · re-ask 1 · /),
      expect.stringMatching(/^step 0 · re-ask 2 · .* not JSON$/),
    ]);
    const reask = eventOf<{ messages: { content: string }[] }>(traces.editor, (event) => event.event === 'model.request' && event.attempt === 1);
    // A body is drawn on the toggle event, after the click: the locators wait for it.
    const attempts = page.locator('#details details.exchange');
    await attempts.nth(1).locator('summary').click();
    expect(await attempts.nth(1).locator('.reask pre').textContent()).toBe(reask.messages.at(-1)?.content);
    await attempts.nth(0).locator('summary').click();
    expect(await attempts.nth(0).locator('pre.answer').textContent()).toBe('It holds, I think.');
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-editor.png'), fullPage: true });
    await page.close();
  });

  it('gives the cost per model and per tier, with the total equal to the top run’s usageTotal', async () => {
    for (const name of ['costs', 'editor', 'music'] as const) {
      const { page } = await open(name);
      const usageTotal = usageTotalOf(traces[name]);
      expect(Number(await page.locator('#cost-total').getAttribute('data-value'))).toBe(usageTotal.costUsd);
      expect(Number(await page.locator('#usage-total').getAttribute('data-value'))).toBe(usageTotal.costUsd);
      const modelCosts = await numbers(page, '#cost-models tbody .cost', 'data-value');
      expect(modelCosts.reduce((sum, cost) => sum + cost, 0)).toBeCloseTo(usageTotal.costUsd as number, 12);
      if (name === 'costs') {
        expect(await texts(page, '#cost-models tbody td:first-child')).toEqual(['openai:gpt-4.1', 'openai:gpt-4.1-nano']);
        expect(await texts(page, '#cost-tiers tbody td:first-child')).toEqual(['balanced', 'fast']);
        await page.screenshot({ path: join(ARTIFACTS, 'viewer-costs.png'), fullPage: true });
      }
      await page.close();
    }
  });

  it('lists the approvals asked, with each decision and its reason', async () => {
    const { page } = await open('approvals');
    const rows = page.locator('#approvals-table tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await texts(page, '#approvals-table .decision')).toEqual(['rejected', 'rejected']);
    expect(await texts(page, '#approvals-table .by')).toEqual(['policy:strict', 'policy:strict']);
    for (const reason of await texts(page, '#approvals-table .reason')) expect(reason).toMatch(/needs approval, and approvals are refused in strict mode/);
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-approvals.png'), fullPage: true });
    await page.close();
  });

  it('renders a trace killed mid-write: the bad line named, runs still going shown as running', async () => {
    const { page } = await open('killed');
    expect(await texts(page, '#bad-lines li')).toEqual([expect.stringMatching(new RegExp(`^line 15: ${traces.killed}:15:\\d+: this line is not JSON`))]);
    expect(await page.locator('#summary-status').textContent()).toBe('running');
    expect(await page.locator('.bar.open').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-killed.png'), fullPage: true });
    await page.close();
  });

  it('shows hostile text as text: nothing in the data runs or loads', async () => {
    const { page, requests } = await open('hostile');
    const sneaky = readTrace(traces.hostile)[0]?.name as string;
    expect(await page.locator('li.run .name').textContent()).toBe(sneaky);
    await page.locator('#details details.exchange summary').click();
    expect(await page.locator('.message pre').textContent()).toBe(sneaky);
    // An approval shows the parameters as asked, without the meta-properties the document fixed, as text.
    const params = await page.locator('#approvals-table td.params').textContent();
    expect(params).toContain(`"path":${JSON.stringify(`out/${sneaky}.md`).slice(0, 20)}`);
    expect(params).not.toContain('FIXED-META-NOT-SHOWN');
    expect(params).not.toContain('"_activity"');
    expect(await page.locator('#approvals-table .reason').textContent()).toBe(sneaky);
    expect(await page.locator('img').count()).toBe(0);
    expect(requests).toHaveLength(1);
    await page.close();
  });

  it('renders a tree of 1,000 runs and 20,000 events', async () => {
    const { page } = await open('large');
    expect(await page.locator('li.run').count()).toBe(1000);
    expect(await page.locator('.bar-run').count()).toBe(1000);
    expect(await page.locator('#summary-events').textContent()).toBe(readTrace(traces.large).length.toLocaleString('en-US'));
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-large.png') });
    await page.close();
  }, 60_000);

  describe('a fan-out of 1,000 runs (VIEW-12)', () => {
    /** The runs the tree and the timeline show, and those of them that matched the filter. */
    const shown = async (page: Page) => ({
      rows: await page.locator('li.run:visible').evaluateAll((items) => items.map((item) => item.getAttribute('data-run'))),
      matches: await texts(page, 'li.run.match:visible > .row .name'),
      lanes: await page.locator('.lane-row:visible').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run'))),
      count: await page.locator('#filter-count').textContent(),
    });

    it('opens with every run labelled by the call that started it', async () => {
      const began = performance.now();
      const { page } = await open('wide');
      // Measured for the record (spec/viewer.md VIEW-10), never asserted.
      console.log(`the 1,000-run fan-out page drew in ${Math.round(performance.now() - began)} ms`);
      expect(await page.locator('li.run').count()).toBe(1000);
      expect(await page.locator('.lane-row').count()).toBe(1000);
      const row = (run: string) => page.locator(`li.run[data-run="${run}"] > .row`);
      expect(await row('run_1').locator('.name').textContent()).toBe('worker');
      expect(await row('run_1').locator('.call').textContent()).toBe('{"topic":"glaciers 1"}');
      expect(await row('run_7').locator('.call').textContent()).toBe('review · {"topic":"monsoons 7"}');
      expect(await row('run_top').locator('.call').count()).toBe(0);
      expect(await page.locator('.lane-row[data-run="run_2"] .label').textContent()).toBe('worker{"topic":"monsoons 2"}');
      await page.close();
    }, 60_000);

    it('narrows the tree and the timeline to the runs matching the filter, with the runs above them', async () => {
      const { page } = await open('wide');
      const filter = page.locator('#filter');
      await filter.fill('reviewer');
      await expect.poll(async () => (await shown(page)).matches).toEqual(Array(10).fill('reviewer'));
      const reviewers = Array.from({ length: 10 }, (_, index) => `run_${index * 100 + 7}`);
      expect(await shown(page)).toEqual({
        rows: ['run_top', ...reviewers],
        matches: Array(10).fill('reviewer'),
        lanes: ['run_top', ...reviewers],
        count: '10 of 1,000 runs',
      });
      // By tool, status, prompt and answer text, every word typed.
      for (const [query, runs] of [
        ['review', reviewers],
        ['failed model_error', Array.from({ length: 9 }, (_, index) => `run_${990 + index}`)],
        ['skagen', ['run_500']],
        ['zephyr-code', ['run_600']],
        // Topics go round five names: every fifth run's is tides.
        [
          'tides worker 45',
          Array.from({ length: 999 }, (_, index) => index)
            .filter((index) => index % 5 === 0 && String(index).includes('45'))
            .map((index) => `run_${index}`),
        ],
      ] as const) {
        await filter.fill(query);
        await expect.poll(async () => (await shown(page)).rows).toEqual(['run_top', ...runs]);
      }
      await filter.fill('');
      await expect.poll(async () => (await shown(page)).rows.length).toBe(1000);
      await filter.fill('tides');
      await expect.poll(async () => (await shown(page)).count).toBe('200 of 1,000 runs');
      await page.locator('li.run[data-run="run_5"] > .row .name').click();
      await page.screenshot({ path: join(ARTIFACTS, 'viewer-wide.png') });
      await page.close();
    }, 60_000);

    it('keeps the time axis in view while the timeline scrolls', async () => {
      const { page } = await open('wide');
      await page.locator('.lane-row[data-run="run_500"]').scrollIntoViewIfNeeded();
      // The axis sits at the top of the window, above the row scrolled to, not back at the top of the section.
      const axis = await page.locator('#timeline .axis').boundingBox();
      const row = await page.locator('.lane-row[data-run="run_500"]').boundingBox();
      expect(row?.y).toBeGreaterThan(0);
      expect(axis?.y).toBeGreaterThanOrEqual(0);
      expect(axis?.y).toBeLessThan(5);
      expect((axis?.y ?? 0) + (axis?.height ?? 0)).toBeLessThanOrEqual((row?.y ?? 0) + 1);
      await page.close();
    }, 60_000);

    it('shows a provider retry as a retry of its model call, with its reason, not as a re-ask in flight', async () => {
      const { page } = await open('wide');
      await page.locator('li.run[data-run="run_3"] > .row .name').click();
      expect(await texts(page, '#details details.exchange > summary')).toEqual([
        expect.stringMatching(/^step 0 · retried once: connect ECONNREFUSED 127\.0\.0\.1:443 · openai:gpt-4\.1-nano · 500 in \/ 80 out/),
      ]);
      await page.locator('#details details.exchange summary').click();
      expect(await page.locator('#details .retry').textContent()).toBe('retry after attempt 1: connect ECONNREFUSED 127.0.0.1:443 (waited 500 ms)');
      const lane = page.locator('.lane-row[data-run="run_3"]');
      expect(await lane.locator('.bar-model').count()).toBe(1);
      expect(await lane.locator('.bar.open').count()).toBe(0);
      await page.close();
    }, 60_000);

    it('shows Requests relative to the top Request’s folder, never the host’s paths', async () => {
      const { page } = await open('wide');
      expect(await page.locator('.run-details .request').textContent()).toBe('orchestrator.json');
      await page.locator('#details details.call', { hasText: 'review' }).first().locator('summary').click();
      expect(await page.locator('#details details.call[open]').textContent()).toContain('(workers/reviewer.json)');
      await page.locator('#details a.run-link').first().click();
      expect(await page.locator('.run-details .request').textContent()).toBe('workers/reviewer.json');
      expect(await page.locator('body').innerText()).not.toContain(WIDE_ROOT);
      await page.close();
    }, 60_000);
  });
});
