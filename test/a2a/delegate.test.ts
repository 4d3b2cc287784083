/** Delegating to an A2A agent (DEL-31 to DEL-37): an agent built with the official SDK, called by a scripted Request through the SDK's client. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { TreeCosts } from '../../src/cli/report/tree-costs.js';
import { createRuntime } from '../../src/create-runtime.js';
import type { ModelRequest } from '../../src/protocol/model.js';
import { memorySink, Tracer } from '../../src/protocol/trace/trace.js';
import { artifactOf, dataPart, publishArtifact, publishStatus, startA2aAgent, type TestAgent, type TestAgentOptions, textPart } from '../helpers/a2a-agent.js';
import { folderWith } from '../helpers/cli.js';
import { memoryJournal } from '../helpers/journal-tree.js';
import { stepModel } from '../helpers/step-model.js';

const agents: TestAgent[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      // A server that never answered still holds its connection.
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function agent(options: TestAgentOptions): Promise<TestAgent> {
  const started = await startA2aAgent(options);
  agents.push(started);
  return started;
}

/** An agent that adds `a` and `b` of the data part it is sent, and reports its usage. */
const adder: TestAgentOptions['behaviour'] = async (context, bus) => {
  const input = context.userMessage.parts[0]?.content;
  const { a, b } = (input?.$case === 'data' ? input.value : {}) as { a: number; b: number };
  publishArtifact(context, bus, artifactOf('sum', dataPart({ sum: a + b })));
  publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED, undefined, { usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.5 } });
};

/**
 * A bare HTTP server on 127.0.0.1 whose GET answers a card named `name` with one JSON-RPC interface
 * (`interfaceUrl`, else `<origin>/agent`) and whose other requests `answer` answers; resolves with its origin.
 */
async function cardServer(name: string, answer: (response: ServerResponse) => void, interfaceUrl?: string): Promise<string> {
  let origin = '';
  const server = createServer((request, response) => {
    if (request.method !== 'GET') return answer(response);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        name,
        supportedInterfaces: [{ url: interfaceUrl ?? `${origin}/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
        capabilities: {},
        skills: [],
      }),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

/** A document whose tool `add` delegates to `reference`, its scopes letting the state through. */
function orchestrator(reference: string, tool: Record<string, unknown> = {}) {
  return folderWith({
    'orchestrator.json': {
      meta: { name: 'orchestrator' },
      context: [
        { type: 'system', text: 'Add numbers with the add tool.' },
        { type: 'state', state: { note: 'NOTE-FOR-THE-AGENT' } },
        {
          type: 'tool',
          tool: {
            add: {
              description: 'Adds two numbers.',
              properties: { a: { type: 'number' }, b: { type: 'number' } },
              _delegate: reference,
              _scopes: ['state'],
              ...tool,
            },
          },
        },
      ],
      schema: {},
    },
  });
}

/** Runs the orchestrator: step 0 calls `add {a: 1, b: 2}` into †state.sum, step 1 outputs what it saw. */
async function run(
  root: string,
  options: {
    allowHosts?: string[];
    signal?: AbortSignal;
    fetchTimeoutMs?: number;
    activityTimeoutMs?: number;
    resolve?: 'upfront';
    budget?: { tokens: number };
  } = {},
) {
  const runtime = createRuntime({
    root,
    allowHosts: options.allowHosts ?? ['127.0.0.1'],
    ...(options.fetchTimeoutMs ? { fetchTimeoutMs: options.fetchTimeoutMs } : {}),
    ...(options.activityTimeoutMs ? { activityTimeoutMs: options.activityTimeoutMs } : {}),
  });
  const model = stepModel(
    () => ({ calls: [{ _tool: 'add', a: 1, b: 2, _outputPath: '†state.sum' }], output: null }),
    () => ({ calls: [], output: 'done' }),
  );
  const sink = memorySink();
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), {
    model,
    tracer: new Tracer([sink]),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
  });
  await runtime.resolvers.close();
  return { result, model, events: sink.events };
}

/** What the model was sent at its second step, as one text. */
function secondPrompt(model: { requests: ModelRequest[] }): string {
  return JSON.stringify(model.requests[1]?.messages ?? []);
}

describe('delegating to an A2A agent', () => {
  it('sends the input as a data part and the scoped context as a second part, and returns the final artifact (DEL-34, DEL-35)', async () => {
    const served = await agent({ behaviour: adder });
    const { result, model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(result.ok).toBe(true);
    // A non-streaming agent is sent the message once and its task read until it is final.
    expect(served.requests[0]?.method).toBe('SendMessage');
    expect(served.requests.slice(1).every((request) => request.method === 'GetTask')).toBe(true);
    const [input, context] = served.messages[0]?.parts ?? [];
    expect(input?.content).toEqual({ $case: 'data', value: { a: 1, b: 2 } });
    expect(context?.metadata).toEqual({ kind: 'context' });
    expect(JSON.stringify(context?.content)).toContain('NOTE-FOR-THE-AGENT');
    expect(secondPrompt(model)).toContain('\\"sum\\":3');
    expect(events.find((event) => event.event === 'delegate.started')).toMatchObject({
      delegate: served.base,
      name: 'test agent',
      model: `a2a:${served.base}`,
    });
  });

  it('adds the usage the agent reports to the caller total, marked remote (DEL-37)', async () => {
    const served = await agent({ behaviour: adder });
    const { result, events } = await run(orchestrator(`a2a+${served.base}`));
    const completed = events.find((event) => event.event === 'delegate.completed') as { usage?: Record<string, unknown> } | undefined;
    expect(completed?.usage).toMatchObject({ inputTokens: 100, outputTokens: 20, costUsd: 0.5, remote: true });
    expect(result.usageTotal.inputTokens).toBe(102);
    expect(result.usageTotal.costUsd).toBe(0.5);
    expect(result.usage.inputTokens).toBe(2);
  });

  it('counts the usage the agent reports against the tree budget (DEL-37)', async () => {
    const served = await agent({ behaviour: adder });
    const { result } = await run(orchestrator(`a2a+${served.base}`), { budget: { tokens: 50 } });
    expect(result.ok ? undefined : result.error.code).toBe('budget_exceeded');
  });

  it('does not call the agent again on resume, and still counts what it reported (JOURNAL-5, DEL-37)', async () => {
    const served = await agent({ behaviour: adder });
    const root = orchestrator(`a2a+${served.base}`);
    const runtime = createRuntime({ root, allowHosts: ['127.0.0.1'] });
    const request = await runtime.load(join(root, 'orchestrator.json'));
    const journal = memoryJournal();
    const answers = [() => ({ calls: [{ _tool: 'add', a: 1, b: 2, _outputPath: '†state.sum' }], output: null }), () => ({ calls: [], output: 'done' })];
    expect((await runtime.run(request, { model: stepModel(...answers), journal })).ok).toBe(true);
    // The journal of a process that died once the call had completed, before its second model call.
    const cut = journal.appended.findIndex((event) => event.event === 'call.completed');
    const resumed = await runtime.resume(memoryJournal(journal.appended.slice(0, cut + 1)), { model: stepModel(...answers), request });
    await runtime.resolvers.close();
    expect(resumed.ok).toBe(true);
    expect(served.messages).toHaveLength(1);
    expect(resumed.usageTotal.inputTokens).toBe(102);
  });

  it('shows the agent as a run of the cost tree whose answer is what it reported, so the report adds up to usageTotal (DEL-37)', async () => {
    const served = await agent({ behaviour: adder });
    const { result, events } = await run(orchestrator(`a2a+${served.base}`));
    const costs = new TreeCosts();
    for (const event of events) costs.add(event);
    const report = costs.report();
    expect(report.total).toMatchObject({
      inputTokens: result.usageTotal.inputTokens,
      outputTokens: result.usageTotal.outputTokens,
      costUsd: result.usageTotal.costUsd,
    });
    const remote = report.runs.find((row) => row.run.name === 'test agent');
    expect(remote?.own).toMatchObject({ inputTokens: 100, costUsd: 0.5 });
    expect(remote?.run.status).toBe('done');
  });

  it('calls an agent that speaks A2A 0.3, through the SDK compatibility layer', async () => {
    const served = await agent({ behaviour: adder, legacy: true });
    const { result, model } = await run(orchestrator(`a2a+${served.base}`));
    expect(result.ok).toBe(true);
    expect(served.requests[0]?.method).toBe('message/send');
    expect(served.messages[0]?.parts[0]?.content).toEqual({ $case: 'data', value: { a: 1, b: 2 } });
    expect(secondPrompt(model)).toContain('\\"sum\\":3');
  });

  it('names the agent by its card URL too (DEL-31)', async () => {
    const served = await agent({ behaviour: adder });
    const { result, model } = await run(orchestrator(served.card));
    expect(result.ok).toBe(true);
    expect(secondPrompt(model)).toContain('\\"sum\\":3');
  });

  it('follows a streaming agent through its artifact chunks to the completed state (DEL-35)', async () => {
    const served = await agent({
      streaming: true,
      behaviour: async (context, bus) => {
        publishArtifact(context, bus, artifactOf('story', textPart('once upon')));
        publishArtifact(context, bus, artifactOf('story', textPart('a time')), true);
        publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED);
      },
    });
    const { result, model } = await run(orchestrator(`a2a+${served.base}`));
    expect(result.ok).toBe(true);
    expect(served.requests.map((request) => request.method)).toEqual(['SendStreamingMessage']);
    expect(secondPrompt(model)).toContain('once upon\\\\na time');
  });

  it('shows a failing agent to the model as a worker_error carrying its status text (DEL-36)', async () => {
    const served = await agent({ behaviour: async (context, bus) => publishStatus(context, bus, TaskState.TASK_STATE_FAILED, 'THE-ABACUS-BROKE') });
    const { result, model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(result.ok).toBe(true);
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'worker_error' } });
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'worker_error' });
    expect(secondPrompt(model)).toContain('THE-ABACUS-BROKE');
    expect(secondPrompt(model)).toContain('failed');
  });

  it('fails an interrupted task with the agent question, and cancels it (DEL-36)', async () => {
    const served = await agent({
      behaviour: async (context, bus) =>
        publishStatus(context, bus, TaskState.TASK_STATE_INPUT_REQUIRED, 'WHICH-CITY?', { usage: { inputTokens: 7, costUsd: 0.01 } }),
    });
    const { result, model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'worker_error', state: 'input-required' } });
    expect(secondPrompt(model)).toContain('WHICH-CITY?');
    expect(served.requests.map((request) => request.method)).toContain('CancelTask');
    // What it reported before it stopped still counts (DEL-17), and the trace says so.
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ usage: { inputTokens: 7, remote: true } });
    expect(result.usageTotal.inputTokens).toBe(9);
  });

  it('fails a stream that ends before its task does, and cancels the task (DEL-36)', async () => {
    const served = await agent({
      streaming: true,
      // The executor returns with its task still working: the server closes the stream.
      behaviour: async (context, bus) => publishStatus(context, bus, TaskState.TASK_STATE_WORKING, 'STILL-THINKING'),
    });
    const { model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'worker_error', state: 'working' } });
    expect(secondPrompt(model)).toContain('STILL-THINKING');
    expect(served.requests.map((request) => request.method)).toContain('CancelTask');
  });

  it('refuses a result the card output schema does not allow (DEL-35)', async () => {
    const served = await agent({
      behaviour: adder,
      skill: { outputSchema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] } },
    });
    const { model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'output_schema_validation_failed' } });
    expect(secondPrompt(model)).toContain('total');
  });

  it('cancels the agent task when our run is cancelled (DEL-36)', async () => {
    let working: () => void = () => undefined;
    const isWorking = new Promise<void>((resolve) => (working = resolve));
    const served = await agent({
      behaviour: (_context, _bus, signal) =>
        new Promise<void>((resolve) => {
          working();
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    const controller = new AbortController();
    void isWorking.then(() => setTimeout(() => controller.abort(), 50));
    const outcome = await Promise.race([
      run(orchestrator(`a2a+${served.base}`), { signal: controller.signal }),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000).unref()),
    ]);
    expect(outcome).not.toBe('hung');
    const { result, events } = outcome as Awaited<ReturnType<typeof run>>;
    expect(result.ok).toBe(false);
    expect(result.ok ? undefined : result.error.code).toBe('cancelled_by_user');
    expect(served.canceled).toHaveLength(1);
    expect(served.requests.map((request) => request.method)).toContain('CancelTask');
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'cancelled_by_user' });
  });

  it('counts what a streaming agent reported before our run was cancelled (DEL-17, DEL-37)', async () => {
    let working: () => void = () => undefined;
    const isWorking = new Promise<void>((resolve) => (working = resolve));
    const served = await agent({
      streaming: true,
      behaviour: (context, bus, signal) =>
        new Promise<void>((resolve) => {
          publishStatus(context, bus, TaskState.TASK_STATE_WORKING, 'thinking', { usage: { inputTokens: 40, costUsd: 0.2 } });
          working();
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    const controller = new AbortController();
    void isWorking.then(() => setTimeout(() => controller.abort(), 100));
    const { result, events } = await run(orchestrator(`a2a+${served.base}`), { signal: controller.signal });
    expect(result.ok ? undefined : result.error.code).toBe('cancelled_by_user');
    expect(served.canceled).toHaveLength(1);
    expect(result.usageTotal).toMatchObject({ inputTokens: 41, costUsd: 0.2 });
    expect(events.find((event) => event.event === 'delegate.failed')).toMatchObject({ code: 'cancelled_by_user', usage: { inputTokens: 40, remote: true } });
  });

  it('refuses an agent whose host is not allowed before anything is sent (DEL-32)', async () => {
    const served = await agent({ behaviour: adder });
    const { result, model, events } = await run(orchestrator(`a2a+${served.base}`), { allowHosts: ['example.com'] });
    expect(result.ok).toBe(true);
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_forbidden' } });
    expect(secondPrompt(model)).toContain('allow-list');
    expect(served.messages).toEqual([]);
    expect(events.some((event) => event.event === 'delegate.started')).toBe(false);
  });

  it('refuses a card that sends its calls to a host not allowed (DEL-32)', async () => {
    const served = await agent({ behaviour: adder });
    // A card served from an allowed host, whose interface is on a host that is not.
    const origin = await cardServer('elsewhere', () => undefined, served.base.replace('127.0.0.1', 'localhost'));
    const { model, events } = await run(orchestrator(`a2a+${origin}/agent`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_forbidden' } });
    expect(secondPrompt(model)).toContain('localhost');
    expect(served.messages).toEqual([]);
  });

  it('bounds a card fetch that stalls, and names a card that is missing (DEL-32)', async () => {
    const stalled = createServer(() => undefined);
    servers.push(stalled);
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    const started = Date.now();
    const { model, events } = await run(orchestrator(`a2a+${origin}/agent`), { fetchTimeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_not_found' } });
    expect(secondPrompt(model)).toContain('/agent/.well-known/agent-card.json');
    stalled.closeAllConnections();

    const served = await agent({ behaviour: adder });
    const missing = await run(orchestrator(`a2a+${served.base}/nobody`));
    expect(missing.events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_not_found' } });
    expect(secondPrompt(missing.model)).toContain('404');
  });

  it('bounds a request the agent never answers (DEL-35)', async () => {
    // The card is answered, the JSON-RPC request never is.
    const origin = await cardServer('silent', () => undefined);
    const started = Date.now();
    const { model, events } = await run(orchestrator(`a2a+${origin}/agent`), { fetchTimeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_not_found' } });
    expect(secondPrompt(model)).toContain('did not answer SendMessage within 900 ms');
  });

  it('stops reading an answer larger than the cap (DEL-35)', async () => {
    // The card is small; the answer to SendMessage is a 5 MiB JSON-RPC result.
    const origin = await cardServer('flood', (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ jsonrpc: '2.0', id: 1, result: { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x'.repeat(5 * 1024 * 1024) }] } } }),
      );
    });
    const { model, events } = await run(orchestrator(`a2a+${origin}/agent`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_forbidden' } });
    expect(secondPrompt(model)).toContain('answered more than 4194304 bytes');
  });

  it('stops a stream whose appended artifact chunks grow past the cap, each chunk under it (DEL-35)', async () => {
    const chunk = 'x'.repeat(1024 * 1024);
    const served = await agent({
      streaming: true,
      behaviour: async (context, bus) => {
        for (let index = 0; index < 6; index++) publishArtifact(context, bus, artifactOf('story', textPart(chunk)), index > 0);
        publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED);
      },
    });
    const { model, events } = await run(orchestrator(`a2a+${served.base}`));
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'delegate_forbidden' } });
    expect(secondPrompt(model)).toContain('its artifacts grew past 4194304 bytes');
  });

  it('bounds an agent that streams working updates forever by the activity timeout, and cancels its task (TOOL-24, DEL-35)', async () => {
    const served = await agent({
      streaming: true,
      behaviour: async (context, bus, signal) => {
        while (!signal.aborted) {
          publishStatus(context, bus, TaskState.TASK_STATE_WORKING);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
    });
    const outcome = await Promise.race([
      run(orchestrator(`a2a+${served.base}`), { activityTimeoutMs: 500 }),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000).unref()),
    ]);
    expect(outcome).not.toBe('hung');
    const { model, events } = outcome as Awaited<ReturnType<typeof run>>;
    expect(events.find((event) => event.event === 'call.failed')).toMatchObject({ error: { code: 'activity_error' } });
    expect(secondPrompt(model)).toContain('had not finished its task within the activity timeout of 0.5 s (last in state working)');
    expect(served.canceled).toHaveLength(1);
  });

  it('takes the tool parameters from the card input schema up front (DEL-33)', async () => {
    const served = await agent({
      behaviour: adder,
      skill: { inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
    });
    const { result, model } = await run(orchestrator(`a2a+${served.base}`, { properties: {} }), { resolve: 'upfront' });
    expect(result.ok).toBe(true);
    const schema = JSON.stringify(model.requests[0]?.schema);
    expect(schema).toContain('"a":{"anyOf":[{"type":"integer"}');
    expect(secondPrompt(model)).toContain('\\"sum\\":3');
  });
});
