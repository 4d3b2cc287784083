/** Unit tests of src/activities/delegate.ts: the child's input and context (DEL-9), order of work (DEL-2), depth (DEL-14), trust (DEL-15), result codes (DEL-11). */
import { CallLedger } from '../../src/protocol/calls/call-ledger.js';
import { describe, expect, it } from 'vitest';
import { type DelegateResolver, createDelegateActivity, delegateInput, isolatedContext } from '../../src/activities/delegate.js';
import type { Model } from '../../src/protocol/model.js';
import { type ErrorCode, ProtocolError } from '../../src/protocol/errors.js';
import { normalizeTool } from '../../src/protocol/tools/normalize-tool.js';
import { checkChild, runChild } from '../../src/protocol/calls/child-run.js';
import { ContextStore } from '../../src/protocol/context/context-store.js';
import type { CallScope } from '../../src/protocol/calls/call-scope.js';
import { runRequest } from '../../src/protocol/run/run-loop.js';
import { ReplayModel } from '../../src/models/replay.js';
import { Runtime } from '../../src/protocol/run/runtime.js';
import type { ActivityEnvironment, ChildRunRequest, RunOptions } from '../../src/protocol/contracts.js';
import type { UsageSummary } from '../../src/protocol/usage.js';
import { RunTrace, Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { TreeBounds } from '../../src/protocol/run/tree-bounds.js';
import type { Call, Message, RequestDocument, ToolSchema } from '../../src/protocol/types.js';
import type { ResolveContext, ResolvedRequest } from '../../src/resolvers/resolver.js';

/** A child Request that needs no model: its plan writes its input's `x` to the output (PLAN-5). */
const echoChild = (extra: Partial<RequestDocument> = {}): RequestDocument => ({
  context: [
    { type: 'input', schema: { type: 'object', properties: { x: {} } } },
    { type: 'tool', tool: { echo: { type: 'object', properties: { _output: true } } } },
    { type: 'plan', mode: 'eager', calls: [{ _tool: 'echo', _output: '†input.x', _outputPath: '†output' }] },
  ],
  schema: true,
  ...extra,
});

/** A resolver double: answers every reference with one resolved document and records what it was asked. */
function fakeResolver(resolved: Partial<ResolvedRequest> = {}): DelegateResolver & { calls: { reference: string; context: ResolveContext }[] } {
  const calls: { reference: string; context: ResolveContext }[] = [];
  return {
    calls,
    async resolve(reference, context) {
      calls.push({ reference, context });
      return { location: '/root/child.json', name: 'child', document: echoChild(), trusted: true, ...resolved };
    },
  };
}

interface Setup {
  depth?: number;
  trusted?: boolean;
  options?: RunOptions;
  runtime?: Runtime;
  model?: Model;
  bounds?: TreeBounds;
}

/**
 * The environment the core gives an Activity, over a calling run at `depth`: `runChild` and
 * `checkChild` are the core's own, and every child asked for is recorded in `runs`.
 */
function environmentFor(setup: Setup = {}) {
  const sink = memorySink();
  const tracer = new Tracer([sink]);
  const runtime = setup.runtime ?? new Runtime();
  const descendantUsage: UsageSummary[] = [];
  const depth = setup.depth ?? 0;
  const bounds = setup.bounds ?? new TreeBounds({ maxRuns: 2000, maxConcurrency: 128 });
  const run = { id: 'run_parent', name: 'parent', location: '/root/parent.json', depth, parent: null, trusted: setup.trusted ?? true, model: setup.model };
  const options: RunOptions = { tracer, ...setup.options };
  const signal = new AbortController().signal;
  const scope: CallScope = {
    runtime,
    store: new ContextStore(),
    trace: new RunTrace(tracer, 'run_parent', null, depth),
    run,
    options,
    tree: { meter: undefined, bounds },
    startRun: (request, childOptions, link) => runRequest(runtime, request, childOptions, link),
    signal,
    errors: [],
    tools: () => new Map(),
    counters: { toolCalls: 0 },
    ledger: new CallLedger(),
    addDescendantUsage: (usage) => {
      descendantUsage.push(usage);
    },
  };
  const runs: ChildRunRequest[] = [];
  const environment: ActivityEnvironment = {
    // A child is recorded once the core has admitted it and it starts.
    runChild: (child) =>
      runChild(
        scope,
        { callId: '0.0', instance: undefined },
        {
          ...child,
          onStart: (id) => {
            runs.push(child);
            child.onStart?.(id);
          },
        },
      ),
    checkChild: (description) => checkChild(scope, description),
    addRemoteUsage: (usage) => scope.addDescendantUsage(usage),
    endRun: () => {},
    run,
    confirm: options.confirm,
    callId: '0.0',
    toolName: 'ask',
    instance: undefined,
    signal,
    trace: scope.trace,
  };
  return { environment, runs, bounds, events: sink.events, descendantUsage };
}

const delegating = (extra: ToolSchema = {}): ToolSchema => normalizeTool({ _delegate: './child.json', properties: { x: {} }, ...extra });

async function failureOf(promise: unknown): Promise<ProtocolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('Expected the delegation to fail, but it succeeded.');
}

describe('delegateInput (DEL-9, CALL-7)', () => {
  it("is the call's parameters with every meta-property removed", () => {
    const call: Call = {
      _tool: 'summarize',
      _reasoningForCall: 'secret reasoning',
      _outputPath: '†state.summary',
      _outputMethod: 'set',
      _instance: 'fr',
      _scopes: ['state'],
      _delegate: './x.json',
      _id: 'c1',
      _custom: 1,
      style: 'bullets',
      nested: { _kept: 'meta names are only removed at the top level' },
    };
    expect(delegateInput(call)).toEqual({ style: 'bullets', nested: { _kept: 'meta names are only removed at the top level' } });
  });

  it('is an empty object for a call without parameters', () => {
    expect(delegateInput({ _tool: 't' })).toEqual({});
  });
});

describe('isolatedContext (DEL-9, SCOPE-6)', () => {
  it("is the delegate's own messages followed by the scoped parent messages, in that order", () => {
    const own: Message[] = [
      { type: 'system', text: 'You summarize.' },
      { type: 'input', schema: { type: 'object' } },
    ];
    const scoped: Message[] = [{ type: 'state', state: { notes: 'n' } }];
    expect(isolatedContext({ context: own, schema: true }, scoped)).toEqual([...own, ...scoped]);
  });

  it('does not change the delegate document', () => {
    const document: RequestDocument = { context: [{ type: 'user', text: 'x' }], schema: true };
    isolatedContext(document, [{ type: 'user', text: 'y' }]);
    expect(document.context).toHaveLength(1);
  });
});

describe('the Delegation Activity: a child that completes (DEL-2, DEL-10, DEL-11)', () => {
  it("resolves the reference against the caller's location, runs the child and returns its output", async () => {
    const resolver = fakeResolver();
    const { environment, runs, events } = environmentFor();
    const tool = delegating();
    const output = await createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', x: 42, _reasoningForCall: 'why' }, tool, [], environment);
    expect(output).toBe(42);
    expect(resolver.calls).toEqual([
      { reference: './child.json', context: { base: '/root/parent.json', toolName: 'ask', tool, signal: environment.signal, trusted: true } },
    ]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ input: { x: 42 }, request: { name: 'child', location: '/root/child.json' }, trusted: true });
    // The core links the child to its caller: one level deeper, with the caller as its parent (DEL-14).
    expect(events.find((event) => event.event === 'run.started')).toMatchObject({ name: 'child', parent: 'run_parent', depth: 1, input: { x: 42 } });
  });

  it('gives the child its own messages then the scoped context, and nothing else of the parent (DEL-9)', async () => {
    const { environment, runs } = environmentFor();
    const scoped: Message[] = [{ type: 'state', state: { shared: true } }];
    await createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), scoped, environment);
    const context = runs[0]?.request.document.context;
    expect(context).toEqual([...echoChild().context, ...scoped]);
  });

  it('traces delegate.started before the child runs and delegate.completed with its total usage (TRACE-7)', async () => {
    const resolver = fakeResolver({ document: echoChild({ config: { tier: 'fast' } }) });
    const { environment, events, descendantUsage } = environmentFor();
    await createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', x: 1 }, delegating({ _scopes: ['state'] }), [], environment);
    const names = events.map((event) => `${event.event}@${event.depth}`);
    expect(names[0]).toBe('delegate.started@0');
    expect(names[1]).toBe('run.started@1');
    expect(names.at(-1)).toBe('delegate.completed@0');
    const started = events[0]!;
    expect(started).toMatchObject({
      run: 'run_parent',
      call: '0.0',
      delegate: '/root/child.json',
      name: 'child',
      resolution: 'runtime',
      scopes: ['state'],
      model: null,
      tier: 'fast',
    });
    const childRun = events.find((event) => event.event === 'run.started');
    expect(childRun).toMatchObject({ run: started.child, parent: 'run_parent', depth: 1, input: { x: 1 } });
    expect(events.at(-1)).toMatchObject({ call: '0.0', child: started.child, usage: expect.objectContaining({ steps: 0 }) });
    expect(descendantUsage).toHaveLength(1);
  });

  it('reports the scopes as [] and the resolution as upfront when the tool says so', async () => {
    const { environment, events } = environmentFor();
    await createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating({ _resolve: 'upfront' }), [], environment);
    expect(events[0]).toMatchObject({ event: 'delegate.started', resolution: 'upfront', scopes: [] });
  });

  it("passes the caller's steps on only when the child sets none, and never its run id, name or input (DEL-10, DEL-20)", async () => {
    // A child that never answers with an output runs until its step bound.
    const stepping = (config: RequestDocument['config'] = {}) => fakeResolver({ document: { context: [], schema: { type: 'string' }, config } });
    const model = new ReplayModel([{ solution: { calls: [], output: null }, repeat: true }]);
    const options: RunOptions = { maxSteps: 3, maxDepth: 4, runId: 'run_parent', name: 'parent', input: { secret: 'PARENT-INPUT' } };
    const childSteps = async (resolver: DelegateResolver) => {
      const { environment, events } = environmentFor({ options, model });
      await failureOf(createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
      const started = events.find((event) => event.event === 'run.started');
      expect(started).toMatchObject({ name: 'child', input: { x: 1 } });
      expect(started?.run).not.toBe('run_parent');
      return events.filter((event) => event.event === 'model.request' && event.depth === 1).length;
    };
    expect(await childSteps(stepping())).toBe(3);
    expect(await childSteps(stepping({ maxSteps: 5 }))).toBe(5);
  });

  it('uses the model the chooser picks, else the caller model (DEL-16)', async () => {
    const callerModel: Model = { id: 'fake:caller', generate: () => Promise.reject(new Error('unused')) };
    const childModel: Model = { id: 'fake:child', generate: () => Promise.reject(new Error('unused')) };
    const inherited = environmentFor({ model: callerModel });
    await createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], inherited.environment);
    expect(inherited.events[0]).toMatchObject({ event: 'delegate.started', model: 'fake:caller' });
    const chosen = environmentFor({ model: callerModel });
    const seen: unknown[] = [];
    const chooseModel = (document: RequestDocument, caller: Model | undefined) => {
      seen.push(document, caller);
      return childModel;
    };
    await createDelegateActivity({ resolvers: fakeResolver(), chooseModel })({ _tool: 'ask', x: 1 }, delegating(), [], chosen.environment);
    expect(seen[1]).toBe(callerModel);
    expect(chosen.events[0]).toMatchObject({ model: 'fake:child' });
    expect(chosen.runs[0]?.model).toBe(childModel);
  });
});

describe('the Delegation Activity: depth (DEL-14, DEL-2)', () => {
  it('fails with max_depth_exceeded before anything is resolved or traced, at the default maximum of 5', async () => {
    const resolver = fakeResolver();
    const { environment, events, runs } = environmentFor({ depth: 5 });
    const error = await failureOf(createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
    expect(error.code).toBe('max_depth_exceeded');
    expect(error.message).toContain('"ask"');
    expect(error.message).toContain('./child.json');
    expect(error.message).toContain('6');
    expect(resolver.calls).toEqual([]);
    expect(events).toEqual([]);
    expect(runs).toEqual([]);
  });

  it('delegates up to the maximum depth included, with the run option as the maximum', async () => {
    const allowed = environmentFor({ depth: 1, options: { maxDepth: 2 } });
    await expect(createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], allowed.environment)).resolves.toBe(1);
    const refused = environmentFor({ depth: 2, options: { maxDepth: 2 } });
    const error = await failureOf(createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], refused.environment));
    expect(error).toMatchObject({ code: 'max_depth_exceeded', data: { maxDepth: 2 } });
  });
});

describe('the Delegation Activity: the run bound (DEL-19, DEL-2)', () => {
  it("admits a child while the tree has runs left, and shares the tree's bounds with it", async () => {
    const treeBounds = new TreeBounds({ maxRuns: 2, maxConcurrency: 1 });
    const { environment } = environmentFor({ bounds: treeBounds });
    await expect(createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], environment)).resolves.toBe(1);
    expect(treeBounds.runs).toBe(2);
  });

  it('fails with budget_exceeded once the tree has started its maximum of runs, with no delegate.started and no child run', async () => {
    const treeBounds = new TreeBounds({ maxRuns: 1, maxConcurrency: 1 });
    const { environment, events, runs } = environmentFor({ bounds: treeBounds });
    const error = await failureOf(createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
    expect(error).toMatchObject({ code: 'budget_exceeded', data: { maxRuns: 1, runs: 1 } });
    expect(error.message).toContain('"ask"');
    expect(error.message).toContain('--max-runs');
    expect(events).toEqual([]);
    expect(runs).toEqual([]);
    expect(treeBounds).toMatchObject({ runs: 1, refused: 1 });
  });

  it('refuses before anything is loaded once the tree has been refused a run', async () => {
    const treeBounds = new TreeBounds({ maxRuns: 1, maxConcurrency: 1 });
    treeBounds.refused = 1;
    const resolver = fakeResolver();
    const { environment } = environmentFor({ bounds: treeBounds });
    const error = await failureOf(createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
    expect(error.code).toBe('budget_exceeded');
    expect(resolver.calls).toEqual([]);
  });
});

describe('the Delegation Activity: trust (DEL-15)', () => {
  const childTrust = async (resolved: Partial<ResolvedRequest>, callerTrusted: boolean) => {
    const { environment, runs } = environmentFor({ trusted: callerTrusted });
    await createDelegateActivity({ resolvers: fakeResolver(resolved) })({ _tool: 'ask', x: 1 }, delegating(), [], environment);
    return runs[0]?.trusted;
  };

  it("tells the resolver the caller's trust, so an anonymous delegate can take it on", async () => {
    for (const callerTrusted of [false, true]) {
      const resolvers = fakeResolver();
      const { environment } = environmentFor({ trusted: callerTrusted });
      await createDelegateActivity({ resolvers })({ _tool: 'ask', x: 1 }, delegating(), [], environment);
      expect(resolvers.calls[0]?.context.trusted).toBe(callerTrusted);
    }
  });

  it('gives any other delegate the trust of where it was loaded from, whatever the caller', async () => {
    expect(await childTrust({ location: '/root/child.json', trusted: true }, false)).toBe(true);
    expect(await childTrust({ location: 'https://untrusted.example/child.json', trusted: false }, true)).toBe(false);
  });
});

describe('the Delegation Activity: failures (DEL-11, ERR-6)', () => {
  const KEPT: ErrorCode[] = [
    'max_depth_exceeded',
    'max_steps_exceeded',
    'max_tokens_exceeded',
    'budget_exceeded',
    'invalid_model_output',
    'output_schema_validation_failed',
    'model_error',
    'rejected_by_user',
    'delegate_forbidden',
    'delegate_not_found',
    'invalid_request',
    'usage_error',
  ];
  const OTHERS: ErrorCode[] = ['invalid_params', 'unresolved_reference', 'unknown_tool', 'activity_error', 'worker_error'];

  /** Delegates to a child whose run fails with `code` (its preparer throws), and returns the error the call fails with. */
  async function childFailingWith(code: ErrorCode) {
    const runtime = new Runtime({
      preparers: [
        () => {
          throw new ProtocolError(code, `The child gave up with ${code}.`);
        },
      ],
    });
    const { environment, events, descendantUsage } = environmentFor({ runtime });
    const error = await failureOf(createDelegateActivity({ resolvers: fakeResolver() })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
    return { error, events, descendantUsage };
  }

  it.each(KEPT)('keeps the child code %s, which the parent can act on', async (code) => {
    const { error } = await childFailingWith(code);
    expect(error.code).toBe(code);
  });

  it.each(OTHERS)('turns the child code %s into worker_error', async (code) => {
    const { error } = await childFailingWith(code);
    expect(error.code).toBe('worker_error');
  });

  it('keeps a cancellation as cancelled_by_user', async () => {
    const { error } = await childFailingWith('cancelled_by_user');
    expect(error.code).toBe('cancelled_by_user');
  });

  it("names the delegate and quotes the child's message, and traces delegate.failed with the child's own code", async () => {
    const { error, events } = await childFailingWith('unknown_tool');
    expect(error.message).toContain('"child"');
    expect(error.message).toContain('/root/child.json');
    expect(error.message).toContain('The child gave up with unknown_tool.');
    const failed = events.find((event) => event.event === 'delegate.failed');
    expect(failed).toMatchObject({ run: 'run_parent', call: '0.0', code: 'unknown_tool', message: 'The child gave up with unknown_tool.' });
    expect(events.findIndex((event) => event.event === 'run.failed')).toBeLessThan(events.indexOf(failed!));
    expect(events.some((event) => event.event === 'delegate.completed')).toBe(false);
  });

  it("rolls the failed child's usage into the parent's all the same (DEL-17)", async () => {
    const { descendantUsage } = await childFailingWith('model_error');
    expect(descendantUsage).toHaveLength(1);
  });

  it('fails with delegate_not_found when neither the tool nor the call sets _delegate', async () => {
    const resolver = fakeResolver();
    const { environment } = environmentFor();
    const error = await failureOf(createDelegateActivity({ resolvers: resolver })({ _tool: 'ask' }, normalizeTool({}), [], environment));
    expect(error.code).toBe('delegate_not_found');
    expect(resolver.calls).toEqual([]);
  });

  it('ignores a _delegate the call carries when its tool does not declare one (TOOL-17)', async () => {
    const resolver = fakeResolver();
    const { environment } = environmentFor();
    const error = await failureOf(
      createDelegateActivity({ resolvers: resolver })({ _tool: 'ask', _delegate: './evil.json' }, normalizeTool({}), [], environment),
    );
    expect(error.code).toBe('delegate_not_found');
    expect(resolver.calls).toEqual([]);
  });

  it('fails with the resolver error, before any delegate.started (DEL-2)', async () => {
    const { environment, events } = environmentFor();
    const resolvers: DelegateResolver = {
      resolve: () => Promise.reject(new ProtocolError('delegate_forbidden', 'The reference leaves the root.')),
    };
    const error = await failureOf(createDelegateActivity({ resolvers })({ _tool: 'ask', x: 1 }, delegating(), [], environment));
    expect(error.code).toBe('delegate_forbidden');
    expect(events).toEqual([]);
  });
});
