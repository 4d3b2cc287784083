// The command-line conventions every executable keeps (CLI-29): --version, -h per subcommand, and one line with the nearest name for an unknown one.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderWith, runCli } from '../helpers/cli.js';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const BINARIES = ['run', 'serve', 'mcp', 'worker'].map((name) => resolve(`dist/bundle/${name}.js`));

describe('the command-line conventions of every executable (CLI-29)', () => {
  it.each(BINARIES)('prints the package version with --version and exits 0: %s', async (bin) => {
    const result = await runCli(['--version'], { bin });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
  });

  it('prints only the usage of the subcommand asked with -h or --help', async () => {
    for (const [subcommand, usage] of [
      ['report', 'Usage: delegate-run report <trace.jsonl>'],
      ['view', 'Usage: delegate-run view <trace.jsonl>'],
    ]) {
      for (const flag of ['-h', '--help']) {
        const result = await runCli([subcommand as string, flag]);
        expect(result.code).toBe(0);
        expect(result.stdout.startsWith(usage as string)).toBe(true);
        expect(result.stdout).not.toContain('--max-steps');
      }
    }
    const top = await runCli(['-h']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('--max-steps');
  });

  it.each<[string, string[], string]>([
    ['run', ['requests/plan/welcome.json', '--max-step', '3'], 'delegate-run: unknown option --max-step; did you mean --max-steps?\n'],
    ['run', ['requests/plan/welcome.json', '--max-step=3'], 'delegate-run: unknown option --max-step; did you mean --max-steps?\n'],
    ['run', ['view', 'trace.jsonl', '--oput', 'x.html'], 'delegate-run view: unknown option --oput; did you mean --out?\n'],
    ['serve', ['--prot', '0'], 'delegate-serve: unknown option --prot; did you mean --port?\n'],
    ['mcp', ['--htpp', '0'], 'delegate-mcp: unknown option --htpp; did you mean --http?\n'],
    ['worker', ['--queu', 'redis://127.0.0.1:1'], 'delegate-worker: unknown option --queu; did you mean --queue?\n'],
  ])('names an unknown option and the nearest one in one line, exit 2: delegate-%s %j', async (name, args, line) => {
    const result = await runCli(args, { bin: resolve(`dist/bundle/${name}.js`) });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(line);
  });

  it('points to --help when no option is near the unknown one', async () => {
    const far = await runCli(['requests/plan/welcome.json', '--frobnicate']);
    expect(far.code).toBe(2);
    expect(far.stderr).toBe('delegate-run: unknown option --frobnicate (--help lists them)\n');
  });

  it('names a mistyped subcommand and the nearest one, while a file of any name still runs', async () => {
    const result = await runCli(['reprot', 'trace.jsonl']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('delegate-run: unknown subcommand reprot; did you mean report?\n');
    // A word far from every subcommand is taken as a request, as before.
    const missing = await runCli(['welcome']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).not.toContain('subcommand');
  });

  it('refuses a mistyped config key when the document loads, naming /config/maxStep and maxSteps (DOC-3a)', async () => {
    const folder = folderWith({ 'typo.json': { config: { maxStep: 3 }, context: [{ type: 'text', text: 'Say hi.' }], schema: true } });
    const result = await runCli([resolve(folder, 'typo.json')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`typo.json#/config/maxStep: Unknown config key "maxStep"; did you mean "maxSteps"?`);
  });
});
