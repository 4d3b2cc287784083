/** Tool rules (TOOL-21): `config.toolRules` forbids tools and sets approvals by glob, first match wins. */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import { RequestError } from '../../src/protocol/errors.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import type { Call } from '../../src/protocol/types.js';
import { applyToolRules, ruleFor } from '../../src/protocol/tools/tool-rules.js';
import { folderWith } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const echo = { properties: { text: { type: 'string' } }, _activity: 'echo' };

/** A document with a shell tool, an echo tool, a gated tool and an rw sandbox, under the given rules. */
function project(toolRules: unknown[]): string {
  const root = folderWith({
    'main.json': {
      meta: { name: 'main' },
      config: { toolRules },
      context: [
        { type: 'tool', tool: { shell_run: echo, shell_kill: echo, echo, gated: { ...echo, _approval: 'required' } } },
        { type: 'toolset', toolset: 'files', sandboxes: { out: { path: './out', mode: 'rw' } } },
      ],
      schema: { type: 'string' },
    },
  });
  mkdirSync(join(root, 'out'));
  return root;
}

async function run(root: string, calls: Call[], mode: 'strict' | 'approve_all' = 'strict') {
  const runtime = createRuntime({ root, activities: { echo: (call) => `echo ${String(call.text)}` } });
  const model = stepModel(
    () => ({ calls, output: null }),
    () => ({ calls: [], output: 'done' }),
  );
  const sink = memorySink();
  const document = await runtime.load(join(root, 'main.json'));
  await runtime.run(document, { model, tracer: new Tracer([sink]), confirm: createApprovalHook({ mode }) });
  const started = sink.events.filter((event) => event.event === 'call.started').map((event) => event.call);
  const outcomes = sink.events
    .filter((event) => event.event === 'call.completed' || event.event === 'call.failed')
    .sort((left, right) => started.indexOf(left.call) - started.indexOf(right.call));
  return { model, outcomes, events: sink.events };
}

describe('tool rules (TOOL-21)', () => {
  it('first match wins, by glob', () => {
    const rules = [
      { tool: 'shell_kill', allowed: true },
      { tool: 'shell*', allowed: false },
      { tool: '*', approval: 'never' as const },
    ];
    expect(ruleFor(rules, 'shell_kill')).toBe(rules[0]);
    expect(ruleFor(rules, 'shell_run')).toBe(rules[1]);
    expect(ruleFor(rules, 'echo')).toBe(rules[2]);
    expect(ruleFor([{ tool: 'e?ho' }], 'echo')).toBeDefined();
    expect(ruleFor([{ tool: 'e.ho' }], 'echo')).toBeUndefined();
  });

  it('applying rules twice changes nothing more (the same objects)', () => {
    const tools = new Map([['a', { type: 'object' as const, properties: { _approval: { const: 'required' } } }]]);
    const rules = [{ tool: 'a', approval: 'never' as const }];
    applyToolRules(tools, rules);
    const once = tools.get('a');
    applyToolRules(tools, rules);
    expect(tools.get('a')).toBe(once);
    expect(once?.properties?._approval).toBeUndefined();
  });

  it('a forbidden tool is neither in the Solution schema nor the prompt; an answer calling it is re-asked', async () => {
    const root = project([{ tool: 'shell*', allowed: false }]);
    let asked = 0;
    const runtime = createRuntime({ root, activities: { echo: (call) => `echo ${String(call.text)}` } });
    const model = stepModel(
      () => (asked++ === 0 ? { calls: [{ _tool: 'shell_run', text: 'rm -rf' }], output: null } : { calls: [{ _tool: 'echo', text: 'hi' }], output: null }),
      () => ({ calls: [], output: 'done' }),
    );
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'main.json')), { model, tracer: new Tracer([sink]) });
    expect(result.ok).toBe(true);
    const sent = JSON.stringify([model.requests[0]?.schema, model.requests[0]?.messages]);
    expect(sent).not.toContain('shell_run');
    expect(sent).not.toContain('shell_kill');
    expect(sent).toContain('echo');
    // The re-ask (LOOP-8) tells the model its answer broke the schema; the shell never ran.
    expect(model.requests[1]?.step).toBe(0);
    expect(sink.events.filter((event) => event.event === 'call.started').map((event) => event.tool)).toEqual(['echo']);
  });

  it('a plan calling a forbidden tool fails that call with unknown_tool', async () => {
    const root = folderWith({
      'main.json': {
        config: { toolRules: [{ tool: 'shell*', allowed: false }] },
        context: [
          { type: 'tool', tool: { shell_run: echo } },
          { type: 'plan', mode: 'eager', calls: [{ _tool: 'shell_run', text: 'rm -rf' }] },
        ],
        schema: { type: 'string' },
      },
    });
    const { outcomes } = await run(root, []);
    expect(outcomes[0]).toMatchObject({ event: 'call.failed', tool: 'shell_run', error: { code: 'unknown_tool' } });
  });

  it('approval: never lets a gated tool and write_file run without asking, even in strict mode', async () => {
    const root = project([
      { tool: 'gated', approval: 'never' },
      { tool: 'write_file', approval: 'never' },
    ]);
    const { outcomes, events } = await run(root, [
      { _tool: 'gated', text: 'x' },
      { _tool: 'write_file', path: 'out/a.txt', content: 'A' },
    ]);
    expect(events.some((event) => event.event === 'approval.requested')).toBe(false);
    expect(outcomes.map((outcome) => outcome.event)).toEqual(['call.completed', 'call.completed']);
    expect(existsSync(join(root, 'out', 'a.txt'))).toBe(true);
  });

  it('approval: required gates a tool that declares none: strict mode rejects it', async () => {
    const root = project([{ tool: 'echo', approval: 'required' }]);
    const { outcomes, events } = await run(root, [{ _tool: 'echo', text: 'x' }]);
    expect(events.find((event) => event.event === 'approval.requested')).toMatchObject({ tool: 'echo' });
    expect(outcomes[0]).toMatchObject({ event: 'call.failed' });
  });

  it('strict mode with write_file gated by default writes nothing', async () => {
    const root = project([]);
    const { outcomes } = await run(root, [{ _tool: 'write_file', path: 'out/a.txt', content: 'A' }]);
    expect(outcomes[0]).toMatchObject({ event: 'call.failed' });
    expect(existsSync(join(root, 'out', 'a.txt'))).toBe(false);
  });

  it('refuses a bad rule at load, naming the pointer', async () => {
    const root = folderWith({ 'bad.json': { config: { toolRules: [{ tool: 'x', approval: 'sometimes' }] }, context: [], schema: { type: 'string' } } });
    const error = await createRuntime({ root })
      .load(join(root, 'bad.json'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toContain('/config/toolRules/0/approval');
  });
  it('ends a run whose rule glob backtracks past its budget, as invalid_request naming the rule (FILES-12)', async () => {
    const long = 'a'.repeat(60);
    const root = folderWith({
      'main.json': {
        config: { toolRules: [{ tool: `${'a*'.repeat(25)}b`, allowed: false }] },
        context: [{ type: 'tool', tool: { [long]: echo } }],
        schema: { type: 'string' },
      },
    });
    const runtime = createRuntime({ root, activities: { echo: () => 'echo' } });
    const model = stepModel(() => ({ calls: [], output: 'done' }));
    const document = await runtime.load(join(root, 'main.json'));
    const result = await runtime.run(document, { model, tracer: new Tracer([memorySink()]) });
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_request', message: expect.stringContaining('/config/toolRules/0/tool') } });
  });
});
