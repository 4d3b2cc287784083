/** A synthetic trace of a wide fan-out, for the viewer's tests: an orchestrator delegating to 999 workers at once, with reviewers, failures, a provider retry and prompts to search. */

/** The folder the trace's Requests were resolved in, as a host path the page must not show. */
export const WIDE_ROOT = '/home/someone/projects/fan-out';

/** Where an event happened: its run, the run's parent and depth. */
type Place = { run: string; parent: string | null; depth: number };

/** One event of the trace. */
type WideEvent = Place & { ts: string; event: string } & Record<string, unknown>;

const TOPICS = ['tides', 'glaciers', 'monsoons', 'reefs', 'dunes'];

/**
 * The events of an orchestrator and `runs - 1` children started together: every hundredth child
 * (from the 7th) is a `reviewer` called by the `review` tool, the rest `worker`s called by the
 * `worker` tool with `{"topic": …}`; the last nine fail; `run_3`'s model call is retried once
 * (`model.retry`); `run_500`'s prompt mentions Skagen and `run_600`'s answer says ZEPHYR-CODE.
 */
export function wideTrace(runs = 1000): WideEvent[] {
  const out: WideEvent[] = [];
  let clock = Date.parse('2026-01-01T12:00:00.000Z');
  const emit = (fields: Place & { event: string } & Record<string, unknown>) => {
    clock += 1;
    out.push({ ts: new Date(clock).toISOString(), ...fields });
  };
  const top: Place = { run: 'run_top', parent: null, depth: 0 };
  const usage = { inputTokens: 500, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const model = 'openai:gpt-4.1-nano';
  const answer = (at: Place, step: number, solution: unknown) =>
    emit({ event: 'model.response', ...at, step, attempt: 0, solution, model, usage, costUsd: 0.0001, ms: 30 });
  const prompt = (at: Place, step: number, text: string) =>
    emit({ event: 'model.request', ...at, step, attempt: 0, messages: [{ role: 'user', content: text }], schema: { type: 'object' } });
  emit({ event: 'run.started', ...top, request: `${WIDE_ROOT}/requests/orchestrator.json`, name: 'orchestrator', model, input: null });
  prompt(top, 0, 'Split the survey into parts and hand each to a worker.');
  answer(top, 0, { calls: [] });
  const children = Array.from({ length: runs - 1 }, (_, index) => {
    const reviewer = index % 100 === 7;
    const topic = `${TOPICS[index % TOPICS.length]} ${index}`;
    return {
      at: { run: `run_${index}`, parent: 'run_top', depth: 1 } as Place,
      index,
      call: `0.${index}`,
      tool: reviewer ? 'review' : 'worker',
      name: reviewer ? 'reviewer' : 'worker',
      topic,
      failed: index >= runs - 10,
      request: `${WIDE_ROOT}/requests/workers/${reviewer ? 'reviewer' : 'worker'}.json`,
    };
  });
  for (const child of children) {
    const params = { topic: child.topic, _delegate: './workers/worker.json' };
    emit({ event: 'call.started', ...top, call: child.call, tool: child.tool, params, instance: null });
    emit({
      event: 'delegate.started',
      ...top,
      call: child.call,
      child: child.at.run,
      delegate: child.request,
      name: child.name,
      reference: './workers/worker.json',
      registry: null,
      resolution: 'runtime',
      scopes: [],
      model,
      tier: 'fast',
    });
    emit({ event: 'run.started', ...child.at, request: child.request, name: child.name, model, input: { topic: child.topic } });
    const place = child.index === 500 ? ' Mind the lighthouse keepers of Skagen.' : '';
    prompt(child.at, 0, `Write two sentences about ${child.topic}.${place}`);
  }
  for (const child of children) {
    if (child.index === 3) emit({ event: 'model.retry', ...child.at, step: 0, attempt: 1, reason: 'connect ECONNREFUSED 127.0.0.1:443', waitMs: 500 });
    if (child.failed) {
      const error = { code: 'model_error', message: 'The provider refused the request.' };
      emit({ event: 'run.failed', ...child.at, ...error });
      emit({ event: 'delegate.failed', ...top, call: child.call, child: child.at.run, ...error });
      emit({ event: 'call.failed', ...top, call: child.call, tool: child.tool, error });
      continue;
    }
    const output = child.index === 600 ? 'The answer is ZEPHYR-CODE.' : `Two sentences about ${child.topic}.`;
    answer(child.at, 0, { calls: [], output });
    const own = { ...usage, costUsd: 0.0001, steps: 1, toolCalls: 0, ms: 2 };
    emit({ event: 'run.completed', ...child.at, output, usage: own, usageTotal: own });
    emit({ event: 'delegate.completed', ...top, call: child.call, child: child.at.run, usage: { ...own, model } });
    emit({ event: 'call.completed', ...top, call: child.call, tool: child.tool, result: output });
  }
  prompt(top, 1, 'Put the parts together.');
  answer(top, 1, { calls: [], output: 'done' });
  const done = children.filter((child) => !child.failed).length;
  const own = { inputTokens: 1000, outputTokens: 160, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0002, steps: 2, toolCalls: runs - 1, ms: 10 };
  const total = { ...own, inputTokens: 1000 + 500 * done, outputTokens: 160 + 80 * done, costUsd: 0.0002 + 0.0001 * done, steps: 2 + done };
  emit({ event: 'run.completed', ...top, output: 'done', usage: own, usageTotal: total });
  return out;
}
