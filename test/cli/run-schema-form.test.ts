/** The CLI says each weaker form than strict once per run, model and form, on stderr and in --json (MODEL-17), against a loopback OpenAI server. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { folderWith, readTrace, startCli } from '../helpers/cli.js';
import { startServer, type LoopbackServer } from '../models/support/loopback.js';
import { openAIError, openAIStream } from '../models/support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** An object schema nesting 12 objects, past OpenAI's 10 levels, and a value of it. */
let deep: Record<string, unknown> = { type: 'string' };
let value: unknown = 'v7';
for (let level = 0; level < 12; level += 1) {
  deep = { type: 'object', properties: { d: deep }, required: ['d'] };
  value = { d: value };
}

describe('weaker forms than strict, said by the CLI', () => {
  it('says a non-strict schema and a step-down to json_object once each, in progress, --json and the trace', async () => {
    server = await startServer([
      // OpenAI refuses the format: the model steps down to json_object (MODEL-5).
      openAIError(400, "Invalid schema for response_format 'solution': the schema is too large."),
      // An answer the core refuses: the re-ask is sent in the same form, and not said again.
      openAIStream(['{"calls":[],"output":"nope"}']),
      openAIStream([JSON.stringify({ calls: [], output: value })]),
    ]);
    const folder = folderWith({ 'big.json': { meta: { name: 'deep' }, context: [{ type: 'system', text: 'Pick one.' }], schema: deep } });
    const trace = join(folder, 'trace.jsonl');
    const { done } = startCli([join(folder, 'big.json'), '--model', 'openai:gpt-4.1', '--base-url', server.url, '--json', '--trace', trace], {
      env: { OPENAI_API_KEY: 'k' },
    });
    const result = await done;
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.output).toEqual(value);
    expect(json.schemaForms).toEqual([
      {
        run: expect.any(String),
        name: 'deep',
        model: 'openai:gpt-4.1',
        form: 'non_strict',
        reason: expect.stringContaining('nests objects deeper than 10 levels'),
        pointer: expect.stringMatching(/^#\/properties\/output\/anyOf\/1(\/properties\/d)+$/),
      },
      {
        run: expect.any(String),
        name: 'deep',
        model: 'openai:gpt-4.1',
        form: 'json_object',
        reason: expect.stringContaining('the server refused json_schema'),
      },
    ]);
    const said = result.stderr.split('\n').filter((line) => line.includes('strict mode off'));
    expect(said).toEqual([
      expect.stringMatching(/^ {2}! strict mode off for deep on openai:gpt-4\.1: #\/properties\/output\/.* nests objects deeper than 10 levels$/),
      expect.stringMatching(
        /^ {2}! strict mode off for deep on openai:gpt-4\.1: JSON mode only, the schema in the prompt \(the server refused json_schema: 400 /,
      ),
    ]);
    // The wire: non-strict json_schema, then json_object twice.
    expect(server.requests.map((request) => request.body.response_format.type)).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(server.requests[0]?.body.response_format.json_schema.strict).toBe(false);
    const forms = readTrace(trace)
      .filter((event) => event.event === 'model.request' || event.event === 'model.response')
      .map((event) => `${event.event} ${(event.schemaForm as { form: string }).form}`);
    expect(forms).toEqual(['model.request non_strict', 'model.response json_object', 'model.request json_object', 'model.response json_object']);
  });

  it('says nothing when the schema goes out strict', async () => {
    server = await startServer([openAIStream(['{"calls":[],"output":{"title":"t","song":"{\\"key\\": \\"C\\"}"}}'])]);
    const folder = folderWith({
      'song.json': {
        meta: { name: 'song' },
        context: [{ type: 'system', text: 'Write.' }],
        schema: { type: 'object', properties: { title: { type: 'string' }, song: { type: 'object' } }, required: ['title', 'song'] },
      },
    });
    const { done } = startCli([join(folder, 'song.json'), '--model', 'openai:gpt-4.1', '--base-url', server.url, '--json'], { env: { OPENAI_API_KEY: 'k' } });
    const result = await done;
    expect(result.code).toBe(0);
    // The free-form song travelled as a JSON-encoded string and reaches the run decoded (MODEL-14).
    expect(JSON.parse(result.stdout)).toMatchObject({ output: { title: 't', song: { key: 'C' } } });
    expect(JSON.parse(result.stdout).schemaForms).toBeUndefined();
    expect(result.stderr).not.toContain('strict mode off');
    expect(server.requests[0]?.body.response_format.json_schema.strict).toBe(true);
  });
});
