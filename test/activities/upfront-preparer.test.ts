import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { ReplayModel } from '../../src/models/replay.js';
import { RequestError } from '../../src/protocol/errors.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith } from '../helpers/cli.js';

const child = (input: object, output: object) => ({
  meta: { name: 'child' },
  context: [
    { type: 'system', text: 'Child.' },
    { type: 'input', schema: input },
  ],
  schema: output,
});

const parent = (tool: object) => ({
  meta: { name: 'parent' },
  context: [
    { type: 'system', text: 'Parent.' },
    { type: 'state', state: { zero: 0 } },
    { type: 'tool', tool: { work: { description: 'Work.', _delegate: './child.json', _resolve: 'upfront', ...tool } } },
  ],
  schema: { type: 'string' },
});

async function run(files: Record<string, unknown>, entries: unknown[]) {
  const root = folderWith(files);
  const runtime = createRuntime({ root });
  const model = new ReplayModel(entries as never);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'parent.json')), { model, tracer: new Tracer([sink]) });
  return { result, events: sink.events, model };
}

describe('up-front delegate resolution', () => {
  const numberInput = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };

  it('shows the parent model the merged parameters and the child schema is enforced before any child starts', async () => {
    const { result, events } = await run(
      { 'parent.json': parent({ properties: { note: { type: 'string' } } }), 'child.json': child(numberInput, { type: 'integer' }) },
      [
        { match: { request: 'parent', step: 0 }, solution: { calls: [{ _tool: 'work', n: '†state.zero' }], output: null } },
        { match: { request: 'parent', step: 1, contains: 'invalid_params' }, solution: { calls: [], output: 'gave up' } },
      ],
    );
    expect(result.ok ? result.output : result.error.message).toBe('gave up');
    const schema = JSON.stringify(events.find((event) => event.event === 'model.request')?.schema);
    expect(schema).toContain('"n"');
    expect(schema).toContain('"note"');
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'invalid_params' } });
    expect(events.some((event) => event.event === 'delegate.started')).toBe(false);
  });

  it('refuses a call with a property neither schema declares: the answer is re-asked and the call never starts', async () => {
    const { result, events } = await run({ 'parent.json': parent({}), 'child.json': child(numberInput, { type: 'integer' }) }, [
      { match: { request: 'parent', step: 0 }, solution: { calls: [{ _tool: 'work', n: 2, surprise: true }], output: null } },
      { match: { request: 'parent', step: 0, contains: 'does not match the Solution schema' }, solution: { calls: [], output: 'done' } },
    ]);
    expect(result.ok ? result.output : result.error.message).toBe('done');
    expect(events.filter((event) => event.event === 'model.request').map((event) => event.attempt)).toEqual([0, 1]);
    expect(events.some((event) => event.event === 'call.started' || event.event === 'delegate.started')).toBe(false);
  });

  it('validates an explicit result against the _output contract after it runs', async () => {
    const runtime = new Runtime({ activities: { work: () => 'not a number' } });
    const document = runtime.validate({
      meta: { name: 'parent' },
      context: [{ type: 'tool', tool: { work: { properties: {}, _output: { type: 'integer' } } } }],
      schema: { type: 'string' },
    });
    const sink = memorySink();
    const model = new ReplayModel([
      { match: { step: 0 }, solution: { calls: [{ _tool: 'work' }], output: null } },
      { match: { step: 1, contains: 'output_schema_validation_failed' }, solution: { calls: [], output: 'saw it' } },
    ]);
    const result = await runtime.run(document, { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.output).toBe('saw it');
    expect(sink.events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'output_schema_validation_failed' } });
  });

  it('fails at load, naming both schemas, when the merge is impossible', async () => {
    const root = folderWith({
      'parent.json': parent({ properties: { n: { type: 'string' } } }),
      'child.json': child(numberInput, { type: 'integer' }),
    });
    const runtime = createRuntime({ root });
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'parent.json')), { model: new ReplayModel([]), tracer: new Tracer([sink]) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(RequestError);
    expect(result.error.message).toContain('"type":"string"');
    expect(result.error.message).toContain('"type":"integer"');
    expect(result.error.message).toContain('#/context/2/tool/work');
    expect(sink.events.some((event) => event.event === 'model.request')).toBe(false);
  });
});
