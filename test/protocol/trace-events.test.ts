/** The trace's event map (src/protocol/trace/events.ts) against what runs really emit: every event the map names, with exactly its fields (spec/trace.md). */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { ModelCatalog } from '../../src/models/model-catalog.js';
import { ReplayModel } from '../../src/models/replay.js';
import type { Model, ModelRequest, ModelResponse } from '../../src/protocol/model.js';
import { TRACE_EVENT_NAMES, type TraceEventMap, type TraceEventName, knownTraceEvent } from '../../src/protocol/trace/events.js';
import { type TraceEvent, Tracer, memorySink as keptEvents } from '../../src/protocol/trace/trace.js';
import type { RequestDocument } from '../../src/protocol/types.js';
import { replayRun, tierRuntime } from '../helpers/tier-runtime.js';
import { BOSS, TreeScript, journalRuntime, memoryJournal } from '../helpers/journal-tree.js';

/** Each event's own fields, required or optional; typed so that every field of the map is listed and no other. */
const FIELDS: { [E in TraceEventName]: Record<keyof TraceEventMap[E], 'required' | 'optional'> } = {
  'run.started': {
    request: 'required',
    name: 'required',
    model: 'required',
    input: 'required',
    requestHash: 'optional',
    tools: 'optional',
    traceId: 'optional',
  },
  'journal.started': { options: 'required', settings: 'required' },
  'journal.resumed': { events: 'required', ignored: 'required', overrides: 'required' },
  'run.resumed': { request: 'required', name: 'required', model: 'required' },
  'model.replayed': { step: 'required', attempt: 'required', usage: 'required', costUsd: 'required' },
  'call.replayed': { call: 'required', tool: 'required', outcome: 'required' },
  'model.request': { step: 'required', attempt: 'required', messages: 'required', schema: 'required', schemaForm: 'optional' },
  'model.retry': { step: 'required', attempt: 'required', reason: 'required', waitMs: 'required' },
  'model.response': {
    step: 'required',
    attempt: 'required',
    solution: 'required',
    text: 'optional',
    model: 'required',
    usage: 'required',
    costUsd: 'required',
    ms: 'required',
    responseFormat: 'optional',
    replayOf: 'optional',
    schemaForm: 'optional',
  },
  'call.started': { call: 'required', tool: 'required', params: 'required', instance: 'required' },
  'call.completed': { call: 'required', tool: 'required', result: 'required', noResult: 'optional' },
  'call.failed': { call: 'required', tool: 'required', error: 'required' },
  'call.skipped': { call: 'required', tool: 'required', reason: 'required' },
  'approval.requested': { call: 'required', tool: 'required', params: 'required' },
  'approval.decided': { call: 'required', tool: 'required', decision: 'required', reason: 'required', by: 'optional' },
  'delegate.started': {
    call: 'required',
    child: 'required',
    delegate: 'required',
    name: 'required',
    reference: 'required',
    registry: 'required',
    resolution: 'required',
    scopes: 'required',
    model: 'required',
    tier: 'required',
    contextMode: 'optional',
    contextReferenceCount: 'optional',
    taskTokens: 'optional',
    allowedToolCount: 'optional',
    droppedTools: 'optional',
    attachments: 'optional',
  },
  'delegate.completed': { call: 'required', child: 'required', usage: 'required' },
  'delegate.failed': {
    call: 'required',
    child: 'required',
    code: 'required',
    message: 'required',
    error: 'required',
    usage: 'optional',
    failureMode: 'optional',
    insufficientContextRequest: 'optional',
  },
  'advisor.opinion': { step: 'required', call: 'required', advisor: 'required', instance: 'required', opinion: 'required', votes: 'required' },
  'mcp.connected': { server: 'required', tools: 'required' },
  'queue.job': { job: 'required', queue: 'required', worker: 'required', attempt: 'required' },
  'queue.retried': { job: 'required', attempts: 'required', usage: 'required' },
  'mcp.failed': { server: 'required', tool: 'optional', message: 'required' },
  'run.completed': { output: 'required', meta: 'optional', usage: 'required', usageTotal: 'required' },
  'run.failed': { code: 'required', message: 'required', error: 'required', usage: 'optional', usageTotal: 'optional' },
};

const COMMON = ['ts', 'event', 'run', 'parent', 'depth'];

/** The sinks of the running test, each with every event's JSON as it was when emitted. */
let watched: { events: TraceEvent[]; emitted: string[] }[] = [];

/** A sink keeping the events, and their JSON as emitted: after the test, every event must still serialise the same (TRACE-23). */
function memorySink() {
  const sink = keptEvents();
  const emitted: string[] = [];
  watched.push({ events: sink.events, emitted });
  return Object.assign(
    (event: TraceEvent) => {
      sink(event);
      emitted.push(JSON.stringify(event));
    },
    { events: sink.events },
  );
}

// An event a listener kept reads the same once the run is over: the trace file serialises a turn's events at its end (TRACE-2, TRACE-23).
afterEach(() => {
  const changed = watched.flatMap(({ events, emitted }) =>
    events.flatMap((event, index) =>
      JSON.stringify(event) === emitted[index] ? [] : [`${event.event} (#${index}) was ${emitted[index]}, is ${JSON.stringify(event)}`],
    ),
  );
  watched = [];
  expect(changed).toEqual([]);
});

/** Why an event does not have exactly its map's fields, or undefined when it does. */
function mismatch(event: TraceEvent): string | undefined {
  const known = knownTraceEvent(event);
  if (!known) return `${event.event} is not in the map`;
  const fields: Record<string, 'required' | 'optional'> = FIELDS[known.event];
  const own = Object.keys(event).filter((key) => !COMMON.includes(key));
  const extra = own.filter((key) => !(key in fields));
  const missing = Object.keys(fields).filter((key) => fields[key] === 'required' && !own.includes(key));
  return extra.length + missing.length === 0 ? undefined : `${event.event}: extra ${extra.join(',') || '-'}, missing ${missing.join(',') || '-'}`;
}

/** A model answering by request name, that reports one retry before the parent's first answer. */
function scriptedModel(answers: Record<string, (request: ModelRequest) => unknown>): Model {
  return {
    id: 'scripted:test',
    async generate(request): Promise<ModelResponse> {
      const answer = answers[request.requestName];
      if (!answer) throw new Error(`No answer for ${request.requestName}.`);
      if (request.step === 0 && request.requestName === 'parent') request.onRetry?.({ attempt: 1, reason: 'The server was busy.', waitMs: 0 });
      const solution = answer(request);
      return {
        text: typeof solution === 'string' ? solution : JSON.stringify(solution),
        ...(typeof solution === 'string' ? {} : { solution }),
        model: 'scripted:test',
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        costUsd: 0,
      };
    },
  };
}

const parent: RequestDocument = {
  meta: { name: 'parent' },
  context: [
    { type: 'text', role: 'system', text: 'Do the work.' },
    {
      type: 'tool',
      tool: {
        helper: { type: 'object', description: 'A helper that fails.', properties: { topic: { type: 'string' }, _delegate: { const: 'anonymous' } } },
        send: { type: 'object', properties: { to: { type: 'string' } }, _approval: 'required', _output: { type: 'string' } },
      },
    },
  ],
  schema: { type: 'string' },
} as RequestDocument;

describe('the trace event map', () => {
  it('names every event a delegating run emits, with exactly its fields', async () => {
    const music = resolve('requests/music');
    const runtime = createRuntime({ root: music });
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(resolve(music, 'producer.json')), {
      model: await ReplayModel.fromFile(resolve(music, 'producer.cassette.json')),
      input: { brief: 'a sad ballad', ambience: 'rain on a window' },
      tracer: new Tracer([sink]),
    });
    expect(result.ok).toBe(true);
    expect(sink.events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it('names retries, approvals, failed calls, failed delegates and failed runs, with exactly their fields', async () => {
    const runtime = createRuntime({ root: process.cwd() });
    const sink = memorySink();
    const model = scriptedModel({
      parent: (request) =>
        request.step === 0
          ? {
              calls: [
                { _tool: 'helper', topic: 'x' },
                { _tool: 'send', to: 'a@example.com', _output: 'sent' },
              ],
              output: null,
            }
          : 'not JSON',
      'anonymous:helper': () => 'not JSON either',
    });
    const result = await runtime.run(parent, {
      model,
      tracer: new Tracer([sink]),
      maxSteps: 2,
      confirm: Object.assign(() => ({ decision: 'rejected' as const, reason: 'Not today.' }), {
        appliesTo: (request: { toolName: string }) => request.toolName === 'send',
      }),
    });
    expect(result.ok).toBe(false);
    const names = new Set(sink.events.map((event) => event.event));
    // Emitted by the successful runs above, and a skipped call and advisors' opinions by the tests below; MCP servers' by test/mcp.
    const music = ['run.completed', 'delegate.completed', 'call.completed', 'call.skipped', 'advisor.opinion', 'mcp.connected', 'mcp.failed'];
    // Emitted by queued child runs on a worker, in test/queue (with exactly its fields there).
    music.push('queue.job', 'queue.retried');
    // Emitted by a journaled run and its resume, below.
    music.push('journal.started', 'journal.resumed', 'run.resumed', 'model.replayed', 'call.replayed');
    expect(TRACE_EVENT_NAMES.filter((name) => !names.has(name) && !music.includes(name))).toEqual([]);
    expect(sink.events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it('names the events of a journaled run and of its resume, with exactly their fields (JOURNAL-2 to JOURNAL-9)', async () => {
    const journal = memoryJournal();
    await journalRuntime([]).run(BOSS, { model: new TreeScript(), journal });
    const cut = journal.appended.findIndex((event) => event.event === 'run.completed');
    const resumed = memoryJournal(journal.appended.slice(0, cut));
    const runtime = journalRuntime([]);
    const result = await runtime.resume(resumed, { model: new TreeScript(), request: runtime.validate(BOSS), maxSteps: 5 });
    expect(result.ok).toBe(true);
    const events = [...journal.appended, ...resumed.appended];
    const names = new Set(events.map((event) => event.event));
    expect(['journal.started', 'journal.resumed', 'run.resumed', 'model.replayed', 'call.replayed'].filter((name) => !names.has(name))).toEqual([]);
    expect(events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it("names advisors' opinions, given in an answer and through a consultation, and the meta of run.completed, with exactly their fields", async () => {
    const runtime = createRuntime({ root: process.cwd() });
    const sink = memorySink();
    const document = {
      meta: { name: 'advised' },
      context: [
        { type: 'meta', meta: { version: '1' } },
        { type: 'advisor', id: 'monitor', on: 'request', role: 'Watches.' },
        { type: 'advisor', id: 'counsel', role: 'Consulted.' },
      ],
      schema: { type: 'string' },
    } as RequestDocument;
    const model = new ReplayModel([
      {
        match: { step: 0 },
        solution: {
          advisors: [{ id: 'monitor', thought: 'Ask counsel.', calls: '{"consult_advisor": 90}' }],
          calls: [{ _tool: 'consult_advisor', opinion: { id: 'counsel', thought: 'Fine.' } }],
          output: null,
        },
      },
      { match: { step: 1 }, solution: { advisors: [{ id: 'monitor', thought: 'Done.' }], calls: [], output: 'ok', meta: { version: '2' } } },
    ]);
    const result = await runtime.run(document, { model, tracer: new Tracer([sink]) });
    expect(result.ok).toBe(true);
    expect(sink.events.filter((event) => event.event === 'advisor.opinion')).toHaveLength(3);
    expect(sink.events.find((event) => event.event === 'run.completed')).toHaveProperty('meta', { version: '2' });
    expect(sink.events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it('names the model a replayed answer stands for, priced as that model, with exactly its fields (TRACE-5, CAS-14)', async () => {
    const runtime = createRuntime({ root: process.cwd() });
    const sink = memorySink();
    const document = { meta: { name: 'priced' }, context: [{ type: 'system', text: 'Answer.' }], schema: { type: 'string' } } as RequestDocument;
    const prices = new ModelCatalog({ models: { 'openai:gpt-4.1': { price: { input: 2, output: 8 } } } });
    const model = new ReplayModel(
      [{ model: 'openai:gpt-4.1', solution: { calls: [], output: 'ok' }, usage: { inputTokens: 500_000, outputTokens: 0 } }],
      'inline',
      { prices },
    );
    const result = await runtime.run(document, { model, tracer: new Tracer([sink]) });
    expect(result.ok && result.usageTotal.costUsd).toBe(1);
    expect(sink.events.find((event) => event.event === 'model.response')).toMatchObject({ model: 'replay:inline', replayOf: 'openai:gpt-4.1', costUsd: 1 });
    expect(sink.events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it('names a call skipped because it was done, with exactly its fields (TRACE-15)', async () => {
    const runtime = createRuntime({ root: process.cwd() });
    const sink = memorySink();
    const done = { _tool: 'note', _output: 'kept', _outputPath: '†state.note' };
    const document = {
      meta: { name: 'parent' },
      context: [
        { type: 'tool', tool: { note: { type: 'object', properties: {}, _output: { type: 'string' } } } },
        { type: 'state', state: { note: 'kept' }, _call: done },
      ],
      schema: { type: 'string' },
    } as unknown as RequestDocument;
    const model = scriptedModel({ parent: () => ({ calls: [done], output: 'ok' }) });
    const result = await runtime.run(runtime.validate(document), { model, tracer: new Tracer([sink]) });
    expect(result.ok).toBe(true);
    expect(sink.events.filter((event) => event.event === 'call.skipped')).toHaveLength(1);
    expect(sink.events.map(mismatch).filter(Boolean)).toEqual([]);
  });

  it("names a delegate worker's events, with exactly their fields (TRACE-17)", async () => {
    const runtime = tierRuntime();
    const call = (task: string) => ({
      _tool: 'delegate',
      tier: 'fast',
      task,
      context: { mode: 'minimal' },
      allowed_tools: ['delegate'],
      _outputPath: '†state.r',
    });
    const { events, result } = await replayRun(
      runtime,
      { meta: { name: 'planner' }, config: { model: 'openai:gpt-5' }, context: [], schema: { type: 'string' } },
      [
        { match: { request: 'planner', step: 0 }, solution: { calls: [call('FIRST'), call('SECOND')], output: null } },
        { match: { request: 'anonymous:delegate', contains: 'FIRST' }, solution: { calls: [], output: 'ok' } },
        {
          match: { request: 'anonymous:delegate', contains: 'SECOND' },
          solution: { calls: [{ _tool: 'need_context', missing: ['a'], why: 'b' }], output: null },
        },
        { match: { request: 'planner', step: 1 }, solution: { calls: [], output: 'done' } },
      ],
    );
    expect(result.ok).toBe(true);
    expect(events.find((event) => event.event === 'delegate.started')).toHaveProperty('droppedTools', ['delegate']);
    expect(events.find((event) => event.event === 'delegate.failed')).toHaveProperty('insufficientContextRequest', { missing: ['a'], why: 'b' });
    expect(events.map(mismatch).filter(Boolean)).toEqual([]);
  });
});
