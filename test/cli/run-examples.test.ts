/** `delegate-run --examples` and `--example <name>` (CLI-31): the shipped examples, listed and run offline from any folder. */
import { describe, expect, it } from 'vitest';
import { exampleArguments } from '../../src/cli/examples.js';
import { exited, startCli, tempDir } from '../helpers/cli.js';

/** Runs the built CLI in a folder of its own, with `env` added to an offline environment. */
function cli(args: string[], env: Record<string, string> = {}) {
  return exited(startCli(args, { cwd: tempDir(), env }).done, `delegate-run ${args.join(' ')}`, 30_000);
}

describe('delegate-run --examples and --example', () => {
  it('--examples lists every example by name, with how to run one, exit 0', async () => {
    const result = await cli(['--examples']);
    expect(result.code).toBe(0);
    for (const name of ['music', 'plan', 'weather', 'refund', 'summarizer']) expect(result.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(result.stdout).toContain('delegate-run --example <name>');
    // requests/a2a needs its agent served first (CLI-31): it is not offered as an example.
    expect(result.stdout).not.toMatch(/^ {2}(a2a|release-note) /m);
  });

  it('--example music replays its cassette with its default input, even with an API key set', async () => {
    const result = await cli(['--example', 'music', '--json', '--quiet'], { OPENAI_API_KEY: 'sk-not-used', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as { ok: boolean; output: { title: string } };
    expect(answer).toMatchObject({ ok: true, output: { title: 'Rain on Empty Streets' } });
  });

  it('runs an example with its Activities module, and options given after it win (--input)', async () => {
    const weather = await cli(['--example=weather', '--json', '--quiet']);
    expect(JSON.parse(weather.stdout)).toMatchObject({ ok: true, output: { city: 'Lisbon' } });
    const plan = await cli(['--example', 'plan', '--input', '{"name":"Bo"}', '--json', '--quiet']);
    expect(JSON.parse(plan.stdout)).toMatchObject({ ok: true, output: { title: 'Welcome aboard, Bo!' } });
  });

  it('an unknown or missing name is a usage error listing the examples, exit 2, one JSON result with --json', async () => {
    const unknown = await cli(['--example', 'nope', '--json']);
    expect(unknown.code).toBe(2);
    const answer = JSON.parse(unknown.stdout) as { ok: boolean; error: { code: string; message: string }; run: null };
    expect(answer).toMatchObject({ ok: false, error: { code: 'usage_error' }, run: null });
    expect(answer.error.message).toContain('got "nope"');
    expect(answer.error.message).toContain('music, plan, weather');
    const missing = await cli(['--example']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('got no name');
    expect(() => exampleArguments(['--example', 'toString'])).toThrow('got "toString"');
    expect(() => exampleArguments(['--example', 'plan', '--example', 'music'])).toThrow('given twice');
  });

  it('leaves any other command line alone, an --example after -- included', () => {
    expect(exampleArguments(['requests/plan/welcome.json', '--json'])).toBeUndefined();
    expect(exampleArguments(['x.json', '--', '--example', 'music'])).toBeUndefined();
  });
});
