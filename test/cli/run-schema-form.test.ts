/** The CLI says each weaker form than strict once per run, model and form, on stderr and in --json (MODEL-15), against a loopback OpenAI server. */
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

const values = Array.from({ length: 1200 }, (_, index) => `v${index}`);

describe('weaker forms than strict, said by the CLI', () => {
  it('says a non-strict schema and a step-down to json_object once each, in progress, --json and the trace', async () => {
    server = await startServer([
      // OpenAI refuses the format: the model steps down to json_object (MODEL-5).
      openAIError(400, "Invalid schema for response_format 'solution': the schema is too large."),
      // An answer the core refuses: the re-ask is sent in the same form, and not said again.
      openAIStream(['{"calls":[],"output":"nope"}']),
      openAIStream(['{"calls":[],"output":"v7"}']),
    ]);
    const folder = folderWith({ 'big.json': { meta: { name: 'big-enum' }, context: [{ type: 'system', text: 'Pick one.' }], schema: { enum: values } } });
    const trace = join(folder, 'trace.jsonl');
    const { done } = startCli([join(folder, 'big.json'), '--model', 'openai:gpt-4.1', '--base-url', server.url, '--json', '--trace', trace], {
      env: { OPENAI_API_KEY: 'k' },
    });
    const result = await done;
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.output).toBe('v7');
    expect(json.schemaForms).toEqual([
      {
        run: expect.any(String),
        name: 'big-enum',
        model: 'openai:gpt-4.1',
        form: 'non_strict',
        reason: "the schema has more than OpenAI's 1000 enum values in total",
        pointer: '#/properties/output/anyOf/1',
      },
      {
        run: expect.any(String),
        name: 'big-enum',
        model: 'openai:gpt-4.1',
        form: 'json_object',
        reason: expect.stringContaining('the server refused json_schema'),
      },
    ]);
    const said = result.stderr.split('\n').filter((line) => line.includes('strict mode off'));
    expect(said).toEqual([
      "  ! strict mode off for big-enum on openai:gpt-4.1: the schema has more than OpenAI's 1000 enum values in total",
      expect.stringMatching(
        /^ {2}! strict mode off for big-enum on openai:gpt-4\.1: JSON mode only, the schema in the prompt \(the server refused json_schema: 400 /,
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
    // The free-form song travelled as a JSON-encoded string and reaches the run decoded (MODEL-12).
    expect(JSON.parse(result.stdout)).toMatchObject({ output: { title: 't', song: { key: 'C' } } });
    expect(JSON.parse(result.stdout).schemaForms).toBeUndefined();
    expect(result.stderr).not.toContain('strict mode off');
    expect(server.requests[0]?.body.response_format.json_schema.strict).toBe(true);
  });
});
