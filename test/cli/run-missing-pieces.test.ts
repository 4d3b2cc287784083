// What the run tree needs and the command line did not give is named before the run starts (CLI-30).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderWith, readTrace, runCli, tempDir } from '../helpers/cli.js';

const INPUT = ['--input', '{"city":"Lisbon","activity":"cycling"}'];

/** A planned parent whose one call delegates to `child`, its result the output. */
function parentWith(child: unknown): string {
  const parent = {
    context: [
      { type: 'tool', tool: { ask: { properties: { topic: { type: 'string' } }, _delegate: './child.json' } } },
      { type: 'plan', calls: [{ _tool: 'ask', topic: 'tides', _outputPath: '†output' }] },
    ],
    schema: true,
  };
  return folderWith({ 'parent.json': parent, 'child.json': child });
}

describe('missing pieces are named at load (CLI-30)', () => {
  it('refuses a tool whose Activity no --activities module registers, naming the tool, the Activity and the flag, before anything runs', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['requests/weather/forecast.json', ...INPUT, '--trace', trace]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('The tool "get_weather" of forecast (');
    expect(result.stderr).toContain(
      'needs the Activity "get_weather", which no --activities module registers (registered: none). Pass --activities <module> whose default export has get_weather.',
    );
    // The latent tool of the same document needs no Activity and is not named.
    expect(result.stderr).not.toContain('advise');
    expect(result.stderr).not.toContain('No entry of the replay cassette');
    expect(readTrace(trace)).toEqual([]);
    const given = await runCli(['requests/weather/forecast.json', ...INPUT, '--activities', 'requests/weather/activities.mjs', '--quiet']);
    expect(given.code).toBe(0);
  });

  it('names a delegate that needs a model when none is chosen, and how to choose one', async () => {
    const folder = parentWith({ context: [{ type: 'text', text: 'Write a line about the topic.' }], schema: true });
    const result = await runCli([join(folder, 'parent.json')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `The delegate "child" (${join(folder, 'child.json')}), which the tool "ask" of parent runs, needs a model. No model was chosen.`,
    );
    expect(result.stderr).toContain('--model openai:<model> | anthropic:<model> | replay:<cassette.json>');
  });

  it('runs a planned tree whose delegates need no model and whose tools are latent, with no model and no Activities', async () => {
    const folder = parentWith({
      context: [
        { type: 'tool', tool: { note: { properties: {}, _output: { type: 'string' } } } },
        { type: 'plan', calls: [{ _tool: 'note', _output: 'calm', _outputPath: '†output' }] },
      ],
      schema: true,
    });
    const result = await runCli([join(folder, 'parent.json'), '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('calm\n');
  });
});
