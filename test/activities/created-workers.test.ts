/** Workers created mid-run (spec/workers.md WRK-7 to WRK-10): worker_create behind an approval, worker_call for created workers only. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApprovalHook } from '../../src/approvals/approval-policy.js';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import type { ConfirmHook, ConfirmRequest } from '../../src/protocol/contracts.js';
import { memorySink, Tracer } from '../../src/protocol/trace/trace.js';
import { folderWith, tempDir } from '../helpers/cli.js';
import { stepModel } from '../helpers/step-model.js';

const team = {
  'team/evaluator.json': { meta: { name: 'evaluator' }, context: [{ type: 'system', text: 'CONFIGURED-EVALUATOR' }], schema: { type: 'string' } },
};

const orchestrator = {
  meta: { name: 'orchestrator' },
  context: [
    { type: 'user', text: 'CALLER-HISTORY' },
    { type: 'workers', from: './team/', allow: ['evaluator'], create: true },
  ],
  schema: { type: 'string' },
};

const definition = { _tool: 'worker_create', name: 'critic', instructions: 'You are a harsh CRITIC-INSTRUCTIONS.', description: 'Criticises a pitch.' };

/** Approves every call and keeps what it was asked. */
function approving(): ConfirmHook & { asked: ConfirmRequest[] } {
  const asked: ConfirmRequest[] = [];
  const hook = Object.assign(
    async (request: ConfirmRequest) => {
      asked.push(request);
      return { decision: 'approved' as const };
    },
    { asked },
  );
  return hook;
}

async function run(
  answers: ((request: ModelRequest) => unknown)[],
  options: { confirm?: ConfirmHook; workersDir?: string; root?: string; maxWorkers?: number } = {},
) {
  const root = options.root ?? folderWith({ ...team, 'orchestrator.json': orchestrator });
  const runtime = createRuntime({
    root,
    ...(options.workersDir ? { workersDir: options.workersDir } : {}),
    ...(options.maxWorkers === undefined ? {} : { maxWorkers: options.maxWorkers }),
  });
  const model = stepModel(...answers);
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), {
    model,
    confirm: options.confirm ?? createApprovalHook({ mode: 'approve_all' }),
    tracer: new Tracer([sink]),
  });
  return { result, model, root, events: sink.events };
}

/** Step 0 creates the critic; step 1 calls it; then the orchestrator ends with what it saw. */
const createThenCall = [
  (request: ModelRequest) => (request.requestName === 'orchestrator' ? { calls: [definition], output: null } : { calls: [], output: 'CRITIQUE' }),
  (request: ModelRequest) =>
    request.requestName === 'orchestrator'
      ? { calls: [{ _tool: 'worker_call', worker: 'critic', input: 'PITCH-INPUT', _outputPath: '†state.critique' }], output: null }
      : { calls: [], output: 'CRITIQUE' },
  (request: ModelRequest) => ({ calls: [], output: JSON.stringify(request.messages).includes('CRITIQUE') ? 'got critique' : 'nothing' }),
];

describe('workers created mid-run (WRK-7 to WRK-10)', () => {
  it('asks approval showing the whole definition, then worker_call runs the worker on its input alone', async () => {
    const confirm = approving();
    const workersDir = tempDir('created-workers-');
    const { result, model } = await run(createThenCall, { confirm, workersDir });
    expect(result.ok && result.output).toBe('got critique');
    const asked = confirm.asked.find((request) => request.toolName === 'worker_create');
    expect(asked?.call).toMatchObject({ name: 'critic', instructions: definition.instructions, description: definition.description });
    const child = model.requests.find((request) => request.requestName === 'critic');
    const seen = JSON.stringify(child?.messages);
    expect(seen).toContain('CRITIC-INSTRUCTIONS');
    expect(seen).toContain('PITCH-INPUT');
    expect(seen).not.toContain('CALLER-HISTORY');
    // A tool-less Request: the worker is offered no tool.
    expect(JSON.stringify(child?.schema)).not.toContain('"_tool"');
    const written = JSON.parse(readFileSync(join(workersDir, 'critic.json'), 'utf8'));
    expect(written).toMatchObject({ meta: { name: 'critic' }, context: [{ type: 'system', text: definition.instructions }] });
  });

  it("traces worker_call's child as a delegation (TRACE-7): delegate.started naming the worker, then delegate.completed", async () => {
    const { events } = await run(createThenCall);
    const call = events.find((event) => event.event === 'call.started' && event.tool === 'worker_call')?.call;
    const started = events.find((event) => event.event === 'delegate.started');
    expect(started).toMatchObject({ call, delegate: 'worker:critic', name: 'critic', reference: 'critic', registry: null, scopes: [], tier: null });
    const child = events.find((event) => event.event === 'run.started' && event.name === 'critic')?.run;
    expect(child).toEqual(expect.any(String));
    expect(started?.child).toBe(child);
    expect(events.find((event) => event.event === 'delegate.completed')).toMatchObject({ call, child });
  });

  it('never overwrites a file in --workers-dir: the create call fails and the file is kept', async () => {
    const workersDir = tempDir('created-workers-');
    writeFileSync(join(workersDir, 'critic.json'), 'KEEP');
    const { model } = await run([createThenCall[0] as (request: ModelRequest) => unknown, () => ({ calls: [], output: 'done' })], { workersDir });
    expect(readFileSync(join(workersDir, 'critic.json'), 'utf8')).toBe('KEEP');
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('never overwrite');
  });

  it('in strict mode a worker_create is refused: nothing is created or written', async () => {
    const workersDir = tempDir('created-workers-');
    const { model } = await run(createThenCall, { confirm: createApprovalHook({ mode: 'strict' }), workersDir });
    expect(existsSync(join(workersDir, 'critic.json'))).toBe(false);
    expect(model.requests.some((request) => request.requestName === 'critic')).toBe(false);
    expect(JSON.stringify(model.requests[2]?.messages)).toContain('delegate_forbidden');
  });

  it('calls a configured worker the allow-list allows with worker_call, as its own tool would (WRK-9)', async () => {
    const { model, events } = await run([
      (request) =>
        request.requestName === 'evaluator'
          ? { calls: [], output: 'EVALUATED' }
          : { calls: [{ _tool: 'worker_call', worker: 'evaluator', input: 'PITCH-X', _outputPath: '†state.e' }], output: null },
      () => ({ calls: [], output: 'done' }),
    ]);
    const child = model.requests.find((request) => request.requestName === 'evaluator');
    expect(JSON.stringify(child?.messages)).toContain('CONFIGURED-EVALUATOR');
    expect(JSON.stringify(child?.messages)).toContain('PITCH-X');
    expect(JSON.stringify(child?.messages)).not.toContain('CALLER-HISTORY');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({ name: 'evaluator', reference: './team/evaluator.json' });
    expect(events.find((event) => event.event === 'call.completed' && event.tool === 'worker_call')).toMatchObject({ result: 'EVALUATED' });
  });

  it('refuses worker_call to a worker of the folder the allow-list leaves out, with delegate_forbidden naming those it allows (WRK-3)', async () => {
    const root = folderWith({
      ...team,
      'team/secret.json': { meta: { name: 'secret' }, context: [{ type: 'system', text: 'SECRET-WORKER' }], schema: { type: 'string' } },
      'orchestrator.json': orchestrator,
    });
    const { model } = await run(
      [() => ({ calls: [{ _tool: 'worker_call', worker: 'secret', input: 'x' }], output: null }), () => ({ calls: [], output: 'done' })],
      { root },
    );
    expect(model.requests.some((request) => request.requestName === 'secret')).toBe(false);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('delegate_forbidden');
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('allow (evaluator)');
  });

  it('offers worker_call without create when a configured worker is allowed, and never worker_create then (WRK-9)', async () => {
    const plain = { ...orchestrator, context: [{ type: 'workers', from: './team/', allow: ['evaluator'] }] };
    const root = folderWith({ ...team, 'orchestrator.json': plain });
    const { model } = await run(
      [
        (request) =>
          request.requestName === 'evaluator'
            ? { calls: [], output: 'EVALUATED' }
            : { calls: [{ _tool: 'worker_call', worker: 'evaluator', input: 'x', _outputPath: '†state.e' }], output: null },
        () => ({ calls: [], output: 'done' }),
      ],
      { root },
    );
    const offered = JSON.stringify(model.requests[0]?.schema);
    expect(offered).toContain('"worker_call"');
    expect(offered).not.toContain('"worker_create"');
    // The configured workers' definitions are the tool's own, never shown to the model.
    expect(offered).not.toContain('_workers');
    expect(model.requests.some((request) => request.requestName === 'evaluator')).toBe(true);
  });

  it('never reaches a worker the tool rules forbid, nor offers worker_call for it alone (TOOL-21)', async () => {
    const ruled = {
      ...orchestrator,
      config: { toolRules: [{ tool: 'evaluator', allowed: false }] },
      context: [{ type: 'workers', from: './team/', allow: ['evaluator'] }],
    };
    const root = folderWith({ ...team, 'orchestrator.json': ruled });
    const { model } = await run([() => ({ calls: [], output: 'done' })], { root });
    expect(JSON.stringify(model.requests[0]?.schema)).not.toContain('"worker_call"');
    const creating = { ...ruled, context: [{ type: 'workers', from: './team/', allow: ['evaluator'], create: true }] };
    const withCreate = folderWith({ ...team, 'orchestrator.json': creating });
    const second = await run(
      [() => ({ calls: [{ _tool: 'worker_call', worker: 'evaluator', input: 'x' }], output: null }), () => ({ calls: [], output: 'done' })],
      { root: withCreate },
    );
    expect(second.model.requests.some((request) => request.requestName === 'evaluator')).toBe(false);
    expect(JSON.stringify(second.model.requests[1]?.messages)).toContain('delegate_forbidden');
  });

  it("checks a configured worker's input against its parameters: a bad input is invalid_params and nothing runs", async () => {
    const typed = {
      'team/evaluator.json': {
        meta: { name: 'evaluator' },
        context: [{ type: 'input', schema: { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] } }],
        schema: { type: 'string' },
      },
    };
    const root = folderWith({ ...typed, 'orchestrator.json': orchestrator });
    const { model } = await run(
      [() => ({ calls: [{ _tool: 'worker_call', worker: 'evaluator', input: { score: 'high' } }], output: null }), () => ({ calls: [], output: 'done' })],
      { root },
    );
    expect(model.requests.some((request) => request.requestName === 'evaluator')).toBe(false);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('invalid_params');
  });

  it('never lets a created worker shadow a configured one: worker_create with its name is invalid', async () => {
    let tried = false;
    const { model } = await run([
      (request) => {
        if (request.requestName === 'evaluator') return { calls: [], output: 'E' };
        if (tried) return { calls: [{ _tool: 'evaluator', input: 'x', _outputPath: '†state.e' }], output: null };
        tried = true;
        return { calls: [{ ...definition, name: 'evaluator' }], output: null };
      },
      () => ({ calls: [], output: 'done' }),
    ]);
    const second = JSON.stringify(model.requests[1]?.messages);
    expect(second).toMatch(/does not match the Solution schema|invalid_params/);
    const evaluator = model.requests.find((request) => request.requestName === 'evaluator');
    expect(JSON.stringify(evaluator?.messages)).toContain('CONFIGURED-EVALUATOR');
  });

  it('refuses the names of built-in tools (WRK-8): worker_create named "delegate" or "consult_advisor" creates nothing', async () => {
    for (const reserved of ['delegate', 'consult_advisor']) {
      let tried = false;
      const { model, events } = await run([
        () => {
          if (tried) return { calls: [], output: 'done' };
          tried = true;
          return { calls: [{ ...definition, name: reserved }], output: null };
        },
      ]);
      expect(JSON.stringify(model.requests[0]?.schema)).toContain(`"${reserved}"`);
      expect(JSON.stringify(model.requests[1]?.messages)).toMatch(/does not match the Solution schema|invalid_params/);
      expect(events.some((event) => event.event === 'call.completed' && event.tool === 'worker_create')).toBe(false);
    }
  });

  it('refuses a built-in name in the Activity too, should a call reach it past the schema (an edited call)', async () => {
    const edit: ConfirmHook = async (request) =>
      request.toolName === 'worker_create' ? { decision: 'edited', call: { ...request.call, name: 'need_context' } } : { decision: 'approved' };
    const { model, events } = await run([() => ({ calls: [definition], output: null }), () => ({ calls: [], output: 'done' })], { confirm: edit });
    const failed = events.find((event) => event.event === 'call.failed' && event.tool === 'worker_create');
    expect(failed?.error).toMatchObject({ code: 'invalid_params' });
    expect(JSON.stringify(model.requests.map((request) => request.requestName))).not.toContain('need_context');
  });

  it('creates at most 32 workers per run tree by default (WRK-11): one answer asking for 33 gets 32, and the 33rd call fails with budget_exceeded the model sees', async () => {
    const workersDir = tempDir('created-workers-');
    const many = Array.from({ length: 33 }, (_, index) => ({ ...definition, name: `critic${index}` }));
    const { model, events } = await run([() => ({ calls: many, output: null }), () => ({ calls: [], output: 'done' })], { workersDir });
    expect(events.filter((event) => event.event === 'call.completed' && event.tool === 'worker_create')).toHaveLength(32);
    const failed = events.filter((event) => event.event === 'call.failed' && event.tool === 'worker_create');
    expect(failed.map((event) => (event.error as { code: string }).code)).toEqual(['budget_exceeded']);
    expect(readdirSync(workersDir)).toHaveLength(32);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('may create at most 32 workers');
  });

  it('takes its limit from maxWorkers (--max-workers), counting every run of the tree, and a name taken twice in one answer once', async () => {
    const { events } = await run(
      [
        () => ({
          calls: [
            { ...definition, name: 'a' },
            { ...definition, name: 'a' },
            { ...definition, name: 'b' },
            { ...definition, name: 'c' },
          ],
          output: null,
        }),
        () => ({ calls: [], output: 'done' }),
      ],
      { maxWorkers: 2 },
    );
    const completed = events.filter((event) => event.event === 'call.completed' && event.tool === 'worker_create');
    expect(completed.map((event) => (event.result as { created: string }).created)).toEqual(['a', 'b']);
    const codes = events.filter((event) => event.event === 'call.failed').map((event) => (event.error as { code: string }).code);
    expect(codes.sort()).toEqual(['budget_exceeded', 'invalid_params']);
  });
});
