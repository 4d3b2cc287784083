/** Tests of `delegate-run view` (src/cli/view.ts, spec/cli.md CLI-20, spec/viewer.md): the page written, where it says, and the unlucky paths. */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/run.js';
import { defaultPagePath } from '../../src/cli/view.js';
import type { ViewData } from '../../src/viewer/view-data.js';
import { runCli, tempDir, waitFor } from '../helpers/cli.js';
import { writeExampleTraces } from '../helpers/example-traces.js';
import { fakePipe } from './fake-terminal.js';

let music: string;

// Four runs of the CLI: generous on a busy machine.
beforeAll(async () => {
  ({ music } = await writeExampleTraces());
}, 120_000);

/** Runs `delegate-run view …` in process. */
async function view(args: string[], env: Record<string, string | undefined> = {}, cwd = process.cwd()) {
  const stdout = fakePipe();
  const stderr = fakePipe();
  const status = await main(['view', ...args], { stdout, stderr, env, cwd });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

/** The data a written page embeds. */
function embedded(page: string): ViewData {
  const match = /<script type="application\/json" id="trace-data">(.*?)<\/script>/s.exec(page);
  if (!match) throw new Error('The page embeds no data.');
  return JSON.parse(match[1] as string) as ViewData;
}

/** A copy of the music trace in a fresh folder, with `edit` applied to its lines. */
function traceCopy(edit: (lines: string[]) => string[] = (lines) => lines): string {
  const path = join(tempDir('view-'), 'trace.jsonl');
  writeFileSync(path, `${edit(readFileSync(music, 'utf8').trim().split('\n')).join('\n')}\n`);
  return path;
}

describe('delegate-run view', () => {
  it('writes the page beside the trace and prints its path on stdout', async () => {
    const trace = traceCopy();
    const result = await view([trace]);
    expect(result.status, result.stderr).toBe(0);
    const page = trace.replace(/\.jsonl$/, '.html');
    expect(result.stdout).toBe(`${page}\n`);
    const html = readFileSync(page, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    // The producer first; its children start in parallel, in whichever order their documents are read.
    const names = embedded(html).runs.map((run) => run.name);
    expect(names[0]).toBe('producer');
    expect(names.slice(1).sort()).toEqual(['composer', 'sound-designer', 'sound-designer']);
  });

  it('writes where --out says, relative to the working directory', async () => {
    const folder = tempDir('view-out-');
    const result = await view([music, '--out', 'page.html'], {}, folder);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(join(folder, 'page.html'));
    expect(existsSync(join(folder, 'page.html'))).toBe(true);
  });

  it('inlines its script and styles and loads nothing from anywhere', async () => {
    const out = join(tempDir('view-'), 'page.html');
    expect((await view([music, '--out', out])).status).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|url\(\s*['"]?(https?:|\/\/)/i);
    expect(html).toContain(readFileSync('src/viewer/page.css', 'utf8').slice(0, 200));
  });

  it('renders a trace with malformed lines, naming them on stderr and in the page', async () => {
    // A run killed mid-write: its last line cut short; and a line that is JSON but no event.
    const trace = traceCopy((lines) => [...lines.slice(0, 10), '[1, 2]', ...lines.slice(10, 20), (lines[20] as string).slice(0, 40)]);
    const out = join(tempDir('view-'), 'page.html');
    const result = await view([trace, '--out', out]);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(`skipped ${trace}:11: this line is not a trace event`);
    expect(result.stderr).toMatch(new RegExp(`skipped ${trace}:22:\\d+: this line is not JSON`));
    const data = embedded(readFileSync(out, 'utf8'));
    expect(data.badLines.map((bad) => bad.line)).toEqual([11, 22]);
    expect(data.events).toHaveLength(20);
  });

  it('says on stderr which runs have not ended: a trace still being written', async () => {
    // Cut before the first run ends: the producer and every child started by then are still running.
    const trace = traceCopy((lines) =>
      lines.slice(
        0,
        lines.findIndex((line) => (JSON.parse(line) as { event: string }).event === 'run.completed'),
      ),
    );
    const result = await view([trace, '--out', join(tempDir('view-'), 'page.html')]);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/runs have not ended in the trace yet: shown as running/);
  });

  it('refuses to write the page over the trace itself', async () => {
    const trace = traceCopy();
    const before = readFileSync(trace, 'utf8');
    const result = await view([trace, '--out', trace]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/is the trace itself/);
    expect(readFileSync(trace, 'utf8')).toBe(before);
  });

  it('exits 2 naming the file when the trace cannot be read', async () => {
    const missing = join(tempDir('view-'), 'missing.jsonl');
    const result = await view([missing]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain(`Cannot read the trace ${missing}`);
  });

  it('exits 2 when the page cannot be written', async () => {
    const result = await view([music, '--out', join(tempDir('view-'), 'no', 'such', 'folder', 'page.html')]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toMatch(/Cannot write the page .*page\.html/);
  });

  it('exits 2 naming the file when DELEGATE_MODELS is not a valid models file', async () => {
    const folder = tempDir('view-models-');
    writeFileSync(join(folder, 'bad.models.json'), '{"models": 3}');
    const out = join(folder, 'page.html');
    const result = await view([music, '--out', out], { DELEGATE_MODELS: join(folder, 'bad.models.json') });
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain('bad.models.json');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 130 without writing the page when stopped by a signal', async () => {
    const out = join(tempDir('view-'), 'page.html');
    const stderr = fakePipe();
    const status = await main(['view', music, '--out', out], { stdout: fakePipe(), stderr, env: {}, cwd: process.cwd(), signal: AbortSignal.abort() });
    expect(status).toBe(130);
    expect(stderr.text()).toContain('cancelled before the page was written');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 with the usage for a missing trace argument or two traces, and one line for an unknown option', async () => {
    for (const args of [[], [music, music]]) {
      const result = await view(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('Usage: delegate-run view <trace.jsonl>');
    }
    const unknown = await view([music, '--bogus']);
    expect(unknown).toMatchObject({ status: 2, stderr: 'delegate-run view: unknown option --bogus (--help lists them)\n' });
    const help = await view(['--help']);
    expect(help).toMatchObject({ status: 0, stderr: '' });
    expect(help.stdout).toContain('--open');
  });

  it('opens the page with the system opener found on PATH', async () => {
    const bin = tempDir('view-bin-');
    const record = join(bin, 'opened.txt');
    const opener = join(bin, process.platform === 'darwin' ? 'open' : 'xdg-open');
    writeFileSync(opener, `#!/bin/sh\necho "$1" > '${record}'\n`);
    chmodSync(opener, 0o755);
    const out = join(tempDir('view-'), 'page.html');
    const result = await view([music, '--out', out, '--open'], { PATH: bin });
    expect(result.status, result.stderr).toBe(0);
    await waitFor(() => existsSync(record) && readFileSync(record, 'utf8') !== '');
    expect(readFileSync(record, 'utf8').trim()).toBe(out);
  });

  it('says so when there is no system opener, and still writes the page', async () => {
    const empty = tempDir('view-bin-');
    const out = join(tempDir('view-'), 'page.html');
    const result = await view([music, '--out', out, '--open'], { PATH: empty });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(`no system opener (xdg-open, open or start) was found; open ${out} in a browser`);
    expect(existsSync(out)).toBe(true);
  });

  it('works from the built executable, its page files copied by the build', async () => {
    const out = join(tempDir('view-'), 'page.html');
    const result = await runCli(['view', music, '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain(readFileSync('dist/viewer/page.js', 'utf8').slice(0, 200));
  });

  it('names the default page after the trace, its extension replaced by .html', () => {
    expect(defaultPagePath('runs/trace.jsonl')).toBe('runs/trace.html');
    expect(defaultPagePath('trace')).toBe('trace.html');
    expect(defaultPagePath('a.b/trace')).toBe('a.b/trace.html');
  });
});
