import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offlineEnv, readTrace, runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';

describe('delegate-run, end to end through the built binary', () => {
  it('runs as `npx delegate-run` from the project folder (the bin is linked and executable)', async () => {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync('npx', ['--no-install', 'delegate-run', '--help'], { encoding: 'utf8', env: offlineEnv() });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Usage: delegate-run');
  });

  it('runs the fully planned example with no model', async () => {
    const result = await runCli(['requests/plan/welcome.json', '--input', '{"name":"Ada","team":"Search"}', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, output: { title: 'Welcome aboard, Ada!', team: 'Search' } });
    // No meta message, no meta field (MSG-23, CLI-4).
    expect(JSON.parse(result.stdout)).not.toHaveProperty('meta');
  });

  it('runs the advisors example offline as written, returning the meta the model wrote under --json (ADV-5, MSG-23, CLI-4)', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['requests/release-advisors/release.json', '--json', '--trace', trace]);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({
      ok: true,
      output: { decision: 'delayed', candidate: '2.4.0' },
      meta: { path: '/checkout/release-plan', version: '7.1.0' },
    });
    const events = readTrace(trace);
    expect(events.at(-1)).toMatchObject({ event: 'run.completed', meta: { version: '7.1.0' } });
    const opinions = events.filter((event) => event.event === 'advisor.opinion');
    // An answer's opinions in the order written; the consultation with its call, whose timing is the call's (LOOP-11).
    expect(opinions.filter((event) => event.step !== null).map((event) => [event.step, event.advisor])).toEqual([
      [0, 'riskAnalyst'],
      [0, 'productManager'],
      [1, 'riskAnalyst'],
      [1, 'releaseCaptain'],
    ]);
    expect(opinions.filter((event) => event.step === null)).toEqual([expect.objectContaining({ advisor: 'legal', call: '0.0' })]);
    expect(opinions.find((event) => event.step === 0 && event.advisor === 'riskAnalyst')).toMatchObject({ votes: { deploy: 10, rollback: 5, delay: 95 } });
  });

  it('runs the tier example offline: a deep planner fans three sub-tasks out to the fast tier and retries the one that asked for context (DEL-23 to DEL-28)', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['requests/tiers/planner.json', '--json', '--trace', trace]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      output: { releaseDates: ['2025-03-12', '2025-04-02'], ticketPattern: '^AUTH-\\d+$' },
    });
    const events = readTrace(trace);
    const started = events.filter((event) => event.event === 'delegate.started');
    expect(started.map((event) => [event.tier, event.model])).toEqual(Array(4).fill(['fast', 'anthropic:claude-haiku-4-5']));
    expect(started.map((event) => event.contextMode)).toEqual(['explicit', 'minimal', 'minimal', 'explicit']);
    expect(events.filter((event) => event.event === 'delegate.failed')).toEqual([
      expect.objectContaining({ failureMode: 'insufficient_context', insufficientContextRequest: expect.objectContaining({ missing: ['†input.changelog'] }) }),
    ]);
    // The planner itself stands for the deep model it names, which may delegate.
    const plannerAsk = events.find((event) => event.event === 'model.request' && event.depth === 0);
    expect(JSON.stringify(plannerAsk?.schema)).toContain('"_tool":{"const":"delegate"}');
  });

  it('runs the pitch-deck example offline: decks listed in a ro sandbox, each handed to the locked evaluator as a PDF attachment, evaluations written after approval (WRK-1, ATT-1 to ATT-7, FILES-1 to FILES-6, TOOL-21)', async () => {
    // A copy, so that the run's writes land in a temp folder and never in the repository.
    const folder = tempDir('pitch-deck-');
    cpSync('requests/pitch-deck', join(folder, 'pitch-deck'), { recursive: true, filter: (source) => !source.endsWith('.md') });
    const trace = join(folder, 'trace.jsonl');
    const result = await runCli(['pitch-deck/orchestrator.json', '--approve', 'approve_all', '--json', '--trace', trace], { cwd: folder });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).output.screened.map((deck: { verdict: string }) => deck.verdict)).toEqual(['meet', 'pass']);
    expect(readFileSync(join(folder, 'pitch-deck', 'evaluations', 'aurora-grid.md'), 'utf8')).toMatch(/^# Aurora Grid\n\nScore: 8\/10/);
    const events = readTrace(trace);
    // The two evaluators run in parallel, so their delegations start in either order.
    const handed = events.filter((event) => event.event === 'delegate.started').map((event) => event.attachments as Array<{ path: string }>);
    expect(handed.sort((a, b) => String(a[0]?.path).localeCompare(String(b[0]?.path)))).toEqual([
      [{ path: 'input/aurora-grid.pdf', mediaType: 'application/pdf', bytes: statSync('requests/pitch-deck/pipeline/aurora-grid.pdf').size }],
      [{ path: 'input/tidewater.pdf', mediaType: 'application/pdf', bytes: statSync('requests/pitch-deck/pipeline/tidewater.pdf').size }],
    ]);
    expect(events.filter((event) => event.event === 'approval.decided').map((event) => [event.tool, event.decision])).toEqual([
      ['write_file', 'approved'],
      ['write_file', 'approved'],
    ]);
    // The evaluator's model got the deck as a file, and the trace names it without its bytes (ATT-6, ATT-7).
    const evaluatorAsk = events.find((event) => event.event === 'model.request' && event.depth === 1);
    expect(JSON.stringify(evaluatorAsk?.messages)).toMatch(
      /"files":\[\{"path":"input\/(aurora-grid|tidewater)\.pdf","mediaType":"application\/pdf","bytes":\d+\}\]/,
    );
    expect(readFileSync(trace, 'utf8')).not.toContain('%PDF-1.4');

    // Under strict approvals the gated writes are refused and nothing is written (FILES-6).
    const strict = tempDir('pitch-deck-');
    cpSync('requests/pitch-deck', join(strict, 'pitch-deck'), { recursive: true, filter: (source) => !source.endsWith('.md') });
    const refused = await runCli(['pitch-deck/orchestrator.json', '--approve', 'strict', '--json'], { cwd: strict });
    expect(refused.code, refused.stderr).toBe(0);
    expect(readdirSync(join(strict, 'pitch-deck', 'evaluations'))).toEqual(['.gitignore']);
  });

  it("runs act 012's refund example: the model repeats its plan, the refund is issued once (PLAN-10)", async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const input = '{"request":"I would like a refund for my last order.","customerId":"cust_123","amount":50}';
    const result = await runCli(['requests/refund/support.json', '--activities', 'requests/refund/activities.mjs', '--input', input, '--trace', trace]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ confirmationId: 'refund_xyz789', message: 'The refund has been processed successfully.' });
    expect(result.stderr.match(/issueRefund: 50 to cust_123/g)).toHaveLength(1);
    const events = readTrace(trace);
    expect(events.filter((event) => event.event === 'call.started' && event.tool === 'issueRefund')).toHaveLength(1);
    expect(events.filter((event) => event.event === 'call.skipped').map((event) => event.tool)).toEqual(['checkBillingHistory', 'issueRefund']);
  });

  it('runs the latent + Activity example offline from its sibling cassette', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([
      'requests/weather/forecast.json',
      '--activities',
      'requests/weather/activities.mjs',
      '--input',
      '{"city":"Lisbon","activity":"cycling"}',
      '--trace',
      trace,
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ city: 'Lisbon', go: true });
    expect(result.stderr).toContain('replaying');
    const events = readTrace(trace);
    expect(events[0]).toMatchObject({ event: 'run.started', parent: null, depth: 0 });
    expect(events.at(-1)).toMatchObject({ event: 'run.completed' });
    for (const event of events) expect(Object.keys(event)).toEqual(expect.arrayContaining(['ts', 'event', 'run', 'parent', 'depth']));
  });

  it('keeps stdout to one JSON object with --json', async () => {
    const result = await runCli([
      'requests/weather/forecast.json',
      '--activities',
      'requests/weather/activities.mjs',
      '--input',
      '{"city":"Lisbon","activity":"cycling"}',
      '--json',
    ]);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, usage: { inputTokens: 1842, outputTokens: 137 }, run: expect.stringMatching(/^run_/) });
  });

  it('rejects a bad document with exit 2, naming the file and each JSON pointer', async () => {
    const result = await runCli(['test/fixtures/bad/request.json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad/request.json#/context/2/type');
    expect(result.stderr).toContain('telepathy');
  });

  it('gives the problems as data under --json: each with the file and its JSON pointer (ERR-1)', async () => {
    const result = await runCli(['test/fixtures/bad/request.json', '--json']);
    expect(result.code).toBe(2);
    const printed = JSON.parse(result.stdout) as { ok: boolean; error: { code: string; problems: Array<{ document: string; pointer: string }> } };
    expect(printed).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(printed.error.problems).toContainEqual(
      expect.objectContaining({ document: expect.stringContaining('bad/request.json'), pointer: '/context/2/type' }),
    );
  });

  it('reports unparseable JSON with line and column', async () => {
    const folder = tempDir();
    const file = join(folder, 'broken.json');
    await import('node:fs').then((fs) => fs.writeFileSync(file, '{\n  "context": [,\n'));
    const result = await runCli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/broken\.json:2:\d+/);
  });

  it('prints one JSON result on stdout for a usage error under --json', async () => {
    const result = await runCli(['requests/plan/welcome.json', '--max-depth', 'lots', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'usage_error', message: expect.stringContaining('--max-depth') } });
  });

  it('refuses a tool that is not an object schema, naming its pointer', async () => {
    const folder = tempDir();
    const file = join(folder, 'array-tool.json');
    await import('node:fs').then((fs) =>
      fs.writeFileSync(file, JSON.stringify({ context: [{ type: 'tool', tool: { list: { type: 'array' } } }], schema: { type: 'string' } })),
    );
    const result = await runCli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('#/context/0/tool/list/type');
  });

  it('stops the run tree at its token budget with exit 1', async () => {
    const result = await runCli(['requests/music/producer.json', '--input', '{"brief":"a ballad"}', '--budget-tokens', '1000', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'budget_exceeded' } });
  });

  it('exits 2 listing the three ways to choose a model when none is available', async () => {
    const folder = tempDir();
    const file = join(folder, 'lonely.json');
    await import('node:fs').then((fs) => fs.writeFileSync(file, JSON.stringify({ context: [{ type: 'user', text: 'hi' }], schema: { type: 'string' } })));
    const result = await runCli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--model');
    expect(result.stderr).toContain('OPENAI_API_KEY');
    expect(result.stderr).toContain('cassette');
  });

  it('runs the calls of one step in parallel (three 300 ms Activities overlap)', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['test/fixtures/parallel/request.json', '--activities', 'test/fixtures/parallel/activities.mjs', '--trace', trace]);
    expect(result.code).toBe(0);
    const order = readTrace(trace)
      .filter((event) => event.event.startsWith('call.'))
      .map((event) => event.event);
    expect(order).toEqual(['call.started', 'call.started', 'call.started', 'call.completed', 'call.completed', 'call.completed']);
  });

  it('cancels on SIGINT during a child run: exit 130, every run ends cancelled, the trace is complete', async () => {
    const folder = tempDir();
    const trace = join(folder, 'trace.jsonl');
    const { child, done } = startCli(['test/fixtures/slow/request.json', '--activities', 'test/fixtures/slow/activities.mjs', '--trace', trace]);
    await waitFor(() => existsSync(trace) && readTrace(trace).some((event) => event.event === 'call.started' && event.depth === 1));
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(130);
    const events = readTrace(trace);
    expect(events.at(-1)).toMatchObject({ event: 'run.failed', code: 'cancelled_by_user', depth: 0 });
    expect(
      events
        .filter((event) => event.event === 'run.failed' && event.code === 'cancelled_by_user')
        .map((event) => event.depth)
        .sort(),
    ).toEqual([0, 1]);
  });
});

describe('delegation, end to end', () => {
  it('runs the music makers with nested and parallel delegation', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli([
      'requests/music/producer.json',
      '--input',
      '{"brief":"a sad ballad","ambience":"rain on a window"}',
      '--trace',
      trace,
      '--json',
    ]);
    expect(result.code).toBe(0);
    const events = readTrace(trace);
    expect(events.filter((event) => event.event === 'delegate.completed')).toHaveLength(3);
    expect(events.filter((event) => event.event === 'call.failed')).toEqual([]);
    const completed = events.at(-1) as unknown as { usageTotal: { inputTokens: number }; usage: { inputTokens: number } };
    expect(completed.usageTotal.inputTokens).toBeGreaterThan(completed.usage.inputTokens);
  });

  it('gives the summarizer only the scoped state', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['requests/summarizer/meeting.json', '--trace', trace]);
    expect(result.code).toBe(0);
    const child = readTrace(trace).find((event) => event.event === 'model.request' && event.depth === 1);
    expect(JSON.stringify(child)).toContain('billing migration');
    expect(JSON.stringify(child)).not.toContain('CONFIDENTIAL');
  });

  it('translates on two instances without crossing them', async () => {
    const result = await runCli(['requests/translator/localize.json', '--input', '{"text":"You can now pin files in your workspace."}', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).output).toMatchObject({ fr: expect.stringContaining('espace de travail'), de: expect.stringContaining('Arbeitsbereich') });
  });

  it('runs the speaker_EN glue example in both resolution modes', async () => {
    const input = '{"userId":"u_123","text":"Hello, world!"}';
    const runtime = await runCli(['requests/speaker/orchestrator.json', '--input', input, '--json']);
    expect(JSON.parse(runtime.stdout)).toMatchObject({ ok: true, output: { delivered: true, to: 'u_123' } });
    const upfront = await runCli([
      'requests/speaker/orchestrator.json',
      '--input',
      input,
      '--resolve',
      'upfront',
      '--model',
      'replay:requests/speaker/orchestrator.upfront.cassette.json',
      '--json',
    ]);
    expect(JSON.parse(upfront.stdout)).toMatchObject({ ok: true, output: { delivered: true, to: 'u_123' } });
  });

  it('stops a recursive delegate at --max-depth', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['test/fixtures/recursive/request.json', '--max-depth', '2', '--trace', trace, '--json']);
    expect(result.code).toBe(0);
    const events = readTrace(trace);
    const failed = events.filter((event) => event.event === 'call.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ depth: 2, error: { code: 'max_depth_exceeded' } });
    expect(Math.max(...events.map((event) => event.depth as number))).toBe(2);
  });

  it('refuses a delegate on a host that is not allowed, before any connection', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['test/fixtures/forbidden/request.json', '--trace', trace, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).output).toBe('refused');
    expect(readTrace(trace).find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_forbidden' } });
  });
});
