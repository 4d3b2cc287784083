// The input given from outside a run tree is checked against the declared input schema before anything runs (DATA-11, CLI-7).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { InputError } from '../../src/protocol/errors.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith, runCli, tempDir } from '../helpers/cli.js';

describe('an input from outside the run tree (DATA-11)', () => {
  it('refuses the input of a planned Request without its required name, naming the pointer instead of asking for a model', async () => {
    for (const given of [['--input', '{}'], []]) {
      const result = await runCli(['requests/plan/welcome.json', ...given]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('does not match the input schema it declares:\n  /: Expected property "name" to be present');
      expect(result.stderr).not.toContain('No model was chosen');
    }
  });

  it('refuses a Request with a model before the model is asked: every pointer, --json, and an empty trace', async () => {
    const trace = join(tempDir(), 'trace.jsonl');
    const result = await runCli(['requests/music/producer.json', '--input', '{"brief":7,"ambience":["rain"]}', '--json', '--trace', trace]);
    expect(result.code).toBe(2);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({ ok: false, run: null, error: { code: 'invalid_input', request: 'producer' } });
    expect(printed.error.issues).toEqual([
      { pointer: '/brief', message: 'Expected string.' },
      { pointer: '/ambience', message: 'Expected string.' },
    ]);
    // Nothing ran: no run.started, no model.request (TRACE-2).
    expect(readFileSync(trace, 'utf8')).toBe('');
    const missing = await runCli(['requests/music/producer.json', '--input', '{"ambience":"rain"}']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('/: Expected property "brief" to be present.');
  });

  it('throws InputError from runtime.run, while a delegate given a mismatching input by its parent still runs', async () => {
    const child = {
      context: [
        { type: 'input', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
        { type: 'plan', calls: [{ _tool: 'echo', _output: '†input', _outputPath: '†output' }] },
        { type: 'tool', tool: { echo: { properties: {} } } },
      ],
      schema: true,
    };
    const parent = {
      context: [
        { type: 'tool', tool: { ask: { properties: { who: { type: 'string' } }, _delegate: './child.json' } } },
        { type: 'plan', calls: [{ _tool: 'ask', who: 'Ada', _outputPath: '†output' }] },
      ],
      schema: true,
    };
    const root = folderWith({ 'child.json': child, 'parent.json': parent });
    const runtime = createRuntime({ root });
    const loadedChild = await runtime.load(join(root, 'child.json'));
    await expect(runtime.run(loadedChild, { input: { who: 'Ada' } })).rejects.toBeInstanceOf(InputError);
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'parent.json')), { tracer: new Tracer([sink]) });
    // The child was given {who} though it declares {name}: its run resolves that at run time (DEL-9).
    expect(result.ok && result.output).toEqual({ who: 'Ada' });
    expect(sink.events.filter((event) => event.event === 'run.started')).toHaveLength(2);
  });
});
