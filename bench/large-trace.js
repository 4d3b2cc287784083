// A synthetic trace of a large run tree (the viewer's benchmark and its large-page test): every run delegates to up to ten children, and runs calls of its own.

/**
 * The events of a tree of `runs` runs, about `events` events in all: each run has two model steps,
 * delegates to its children in parallel at step 0, and runs enough Activity calls to reach the
 * count. Times advance 1 ms an event; children of a run overlap.
 */
export function largeTrace({ runs, events }) {
  const out = [];
  let clock = Date.parse('2026-01-01T12:00:00.000Z');
  const children = Array.from({ length: runs }, () => []);
  for (let id = 1; id < runs; id++) children[Math.floor((id - 1) / 10)].push(id);
  // Each run: 6 events of its own, 4 per delegation it makes; the rest are Activity calls of 2 events.
  const fixed = runs * 6 + (runs - 1) * 4;
  const callsPerRun = Math.max(0, Math.floor((events - fixed) / 2 / runs));
  const base = (id, depth, parent) => ({ run: `run_${id}`, parent: parent === null ? null : `run_${parent}`, depth });
  const emit = (fields) => {
    clock += 1;
    out.push({ ts: new Date(clock).toISOString(), ...fields });
  };
  const messages = [
    { role: 'system', content: 'Answer with one JSON object of the form {"calls": [...], "output": ...}.' },
    { role: 'user', content: 'Do the part of the work you are given, delegating what you can.' },
  ];
  const usage = { inputTokens: 800, outputTokens: 120, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const visit = (id, depth, parent) => {
    const at = base(id, depth, parent);
    emit({ event: 'run.started', ...at, request: `/requests/node-${id}.json`, name: `node-${id}`, model: 'openai:gpt-4.1-nano', input: null });
    emit({ event: 'model.request', ...at, step: 0, attempt: 0, messages, schema: { type: 'object' } });
    emit({
      event: 'model.response',
      ...at,
      step: 0,
      attempt: 0,
      solution: { calls: [], output: null },
      model: 'openai:gpt-4.1-nano',
      usage,
      costUsd: 0.00013,
      ms: 40,
    });
    for (let call = 0; call < callsPerRun; call++) {
      emit({ event: 'call.started', ...at, call: `0.a${call}`, tool: 'lookup', params: { key: call }, instance: null });
      emit({ event: 'call.completed', ...at, call: `0.a${call}`, tool: 'lookup', result: { value: call } });
    }
    let size = 1;
    for (const [index, child] of children[id].entries()) {
      emit({ event: 'call.started', ...at, call: `0.${index}`, tool: 'delegate_part', params: { part: child }, instance: null });
      emit({
        event: 'delegate.started',
        ...at,
        call: `0.${index}`,
        child: `run_${child}`,
        delegate: `/requests/node-${child}.json`,
        name: `node-${child}`,
        reference: './node.json',
        registry: null,
        resolution: 'runtime',
        scopes: [],
        model: 'openai:gpt-4.1-nano',
        tier: 'fast',
      });
      size += visit(child, depth + 1, id);
      emit({
        event: 'delegate.completed',
        ...at,
        call: `0.${index}`,
        child: `run_${child}`,
        usage: { ...usage, costUsd: 0, steps: 2, toolCalls: 0, ms: 1, model: 'openai:gpt-4.1-nano' },
      });
      emit({ event: 'call.completed', ...at, call: `0.${index}`, tool: 'delegate_part', result: 'done' });
    }
    emit({ event: 'model.request', ...at, step: 1, attempt: 0, messages, schema: { type: 'object' } });
    emit({
      event: 'model.response',
      ...at,
      step: 1,
      attempt: 0,
      solution: { calls: [], output: 'done' },
      model: 'openai:gpt-4.1-nano',
      usage,
      costUsd: 0.00013,
      ms: 40,
    });
    const own = { inputTokens: 1600, outputTokens: 240, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.00026, steps: 2, toolCalls: callsPerRun, ms: 1 };
    const total = { ...own, inputTokens: 1600 * size, outputTokens: 240 * size, costUsd: 0.00026 * size, steps: 2 * size };
    emit({ event: 'run.completed', ...at, output: 'done', usage: own, usageTotal: total });
    return size;
  };
  visit(0, 0, null);
  return out;
}
