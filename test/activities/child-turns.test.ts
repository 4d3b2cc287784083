// DEL-30: children started together take turns, so the first child's model request leaves before the rest are prepared.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import type { Model, ModelRequest } from '../../src/protocol/model.js';
import { childTurn, childTurnSlots } from '../../src/protocol/calls/child-turns.js';
import { Tracer, memorySink } from '../../src/protocol/trace/trace.js';
import { folderWith } from '../helpers/cli.js';
import { answered } from '../helpers/step-model.js';

const WIDTH = 20;

const orchestrator = {
  meta: { name: 'orchestrator' },
  context: [
    { type: 'system', text: 'Delegate every task at once.' },
    {
      type: 'tool',
      tool: { task: { properties: { task: { type: 'string' } }, required: ['task'], _delegate: './worker.json' } },
    },
  ],
  schema: { type: 'string' },
};

const worker = {
  meta: { name: 'worker' },
  context: [
    { type: 'system', text: 'Do the one task.' },
    { type: 'input', schema: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] } },
  ],
  schema: { type: 'string' },
};

/** The orchestrator calls `task` WIDTH times at once, then answers; each worker answers its task back, at once or after `workerMs`. */
function fanOutModel(workerMs = 0): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: 'scripted:fan-out',
    requests,
    async generate(request) {
      requests.push(request);
      if (request.requestName === 'orchestrator') {
        if (request.step > 0) return answered({ calls: [], output: 'done' }, 'scripted');
        const calls = Array.from({ length: WIDTH }, (_, n) => ({ _tool: 'task', task: `task ${n}` }));
        return answered({ calls, output: null }, 'scripted');
      }
      if (workerMs > 0) await new Promise((resolve) => setTimeout(resolve, workerMs));
      const task = /task \d+/.exec(request.messages.map((message) => message.content).join('\n'));
      return answered({ output: `did ${task?.[0]}` }, 'scripted');
    },
  };
}

async function fanOut(workerMs = 0) {
  const root = folderWith({ 'orchestrator.json': orchestrator, 'worker.json': worker });
  const runtime = createRuntime({ root });
  const sink = memorySink();
  const model = fanOutModel(workerMs);
  const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), { model, tracer: new Tracer([sink]) });
  return { result, events: sink.events, model };
}

describe('children started together take turns (DEL-30)', () => {
  it("sends the first children's model requests before the later children start, an eighth of those waiting per turn", async () => {
    const { result, events } = await fanOut();
    expect(result.ok).toBe(true);
    const order = events.filter((event) => event.depth === 1 && (event.event === 'run.started' || event.event === 'model.request'));
    expect(order).toHaveLength(2 * WIDTH);
    // Each turn starts an eighth of the children still waiting, rounded up, and each of them asks
    // its model before the next turn starts anyone: 20 waiting go as 3, 3, 2, 2, 2, 1, ...
    let waiting = WIDTH;
    let at = 0;
    while (waiting > 0) {
      const share = Math.ceil(waiting / 8);
      const turn = order.slice(at, at + 2 * share);
      const started = turn.filter((event) => event.event === 'run.started').map((event) => event.run);
      const asked = turn.filter((event) => event.event === 'model.request').map((event) => event.run);
      expect(started).toHaveLength(share);
      expect(asked.sort()).toEqual(started.sort());
      waiting -= share;
      at += 2 * share;
    }
  });

  it('ends the children still waiting for their turn as cancelled, asking no model, when the run is cancelled', async () => {
    const root = folderWith({ 'orchestrator.json': orchestrator, 'worker.json': worker });
    const runtime = createRuntime({ root });
    const controller = new AbortController();
    const model = fanOutModel();
    const asked: string[] = [];
    const cancelling: Model = {
      id: model.id,
      generate(request) {
        // The first child's request cancels the run: the children of later turns have not started yet.
        if (request.requestName === 'worker') {
          asked.push(request.requestName);
          controller.abort();
        }
        return model.generate(request);
      },
    };
    const sink = memorySink();
    const result = await runtime.run(await runtime.load(join(root, 'orchestrator.json')), {
      model: cancelling,
      signal: controller.signal,
      tracer: new Tracer([sink]),
    });
    expect(!result.ok && result.error.code).toBe('cancelled_by_user');
    // At most the first turn's children (an eighth of 20, rounded up) reached their model.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThanOrEqual(Math.ceil(WIDTH / 8));
    // Every child that started ended, and ended cancelled.
    const children = sink.events.filter((event) => event.depth === 1 && event.event === 'run.started').map((event) => event.run);
    const ends = sink.events.filter((event) => event.depth === 1 && (event.event === 'run.completed' || event.event === 'run.failed'));
    expect(ends.map((event) => event.run).sort()).toEqual([...children].sort());
    expect(ends.every((event) => event.event === 'run.failed' && event.code === 'cancelled_by_user')).toBe(true);
  });

  it('still runs the children in parallel, in the order their calls were made', async () => {
    const { result, events, model } = await fanOut(40);
    expect(result.ok).toBe(true);
    const workers = model.requests.filter((request) => request.requestName === 'worker');
    expect(workers.map((request) => /task \d+/.exec(request.messages.map((message) => message.content).join('\n'))?.[0])).toEqual(
      Array.from({ length: WIDTH }, (_, n) => `task ${n}`),
    );
    // Every child has asked before the first one answers: none waits for another to finish.
    const depthOne = events.filter((event) => event.depth === 1);
    const firstAnswer = depthOne.findIndex((event) => event.event === 'model.response');
    expect(depthOne.slice(0, firstAnswer).filter((event) => event.event === 'model.request')).toHaveLength(WIDTH);
    const outputs = events.filter((event) => event.event === 'delegate.completed');
    expect(outputs).toHaveLength(WIDTH);
  });
});

describe('the turns of children that keep arriving (DEL-30)', () => {
  it('lets them go in the order they asked, and holds no more slots than twice those waiting', async () => {
    const gone: number[] = [];
    const asked: Promise<void>[] = [];
    let most = 0;
    let next = 0;
    // Three children ask every turn for 300 turns, as fast as the share per turn lets them go: the list is never empty.
    for (let turn = 0; turn < 300; turn++) {
      for (let n = 0; n < 3; n++) {
        const id = next++;
        asked.push(childTurn().then(() => void gone.push(id)));
      }
      most = Math.max(most, childTurnSlots() / Math.max(1, next - gone.length));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(asked);
    expect(gone).toEqual(Array.from({ length: next }, (_, id) => id));
    expect(most).toBeLessThanOrEqual(2);
    expect(childTurnSlots()).toBe(0);
  });
});
