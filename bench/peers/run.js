// The peers' side of the fan-out benchmark (npm run bench:peers): the same workload on delegate-run, the Vercel AI SDK (subagents as tools) and the OpenAI Agents SDK (agents as tools), against the same loopback model in a process of its own. Reports, never judges.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { agents } from './agents.js';
import { MODEL, vercel } from './vercel.js';
import { WORKLOAD, bareSdkFanOut, criticalPathMs, delegateRunFanOut, overheadPerCall, startLoopback, taskOf } from '../fan-out.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    tasks: { type: 'string', default: '100' },
    latency: { type: 'string', default: '200' },
    repeat: { type: 'string', default: '3' },
    calls: { type: 'string', default: '300' },
  },
});
const tasks = Number(values.tasks);
const latencyMs = Number(values.latency);
const repeat = Number(values.repeat);
const overheadCalls = Number(values.calls);

/** A bare `openai` SDK call loop doing a peer leaf's request (system and user text), the baseline of its overhead. */
function bareLeaf(url) {
  const client = new OpenAI({ apiKey: 'not-needed', baseURL: `${url}/v1`, maxRetries: 0 });
  return async (n) => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: WORKLOAD.workerSystem },
        { role: 'user', content: taskOf(n) },
      ],
    });
    return completion.choices[0]?.message?.content;
  };
}

async function perCall(body, calls) {
  for (let n = 0; n < 50; n++) await body(n);
  const started = performance.now();
  for (let n = 0; n < calls; n++) await body(n);
  return (performance.now() - started) / calls;
}

/** Fan-out figures of one framework: ratios to the critical path over `repeat` runs, and what the model was asked in the last. */
async function fanOutOf(loopback, once) {
  const ratios = [];
  let asked;
  for (let i = 0; i < repeat; i++) {
    await loopback.reset(tasks);
    const started = performance.now();
    const result = await once();
    const ms = result?.ms ?? performance.now() - started;
    ratios.push(ms / criticalPathMs(latencyMs));
    asked = await loopback.stats();
  }
  ratios.sort((a, b) => a - b);
  return {
    ratioMedian: ratios[Math.floor(ratios.length / 2)],
    ratioMin: ratios[0],
    ratioMax: ratios.at(-1),
    requests: asked.requests,
    promptChars: asked.promptChars,
  };
}

const slow = await startLoopback({ latencyMs, tasks });
const fast = await startLoopback({ latencyMs: 0, tasks: 1 });
const rows = [];
try {
  // The floor: the same workload on the openai SDK alone, no framework (bench/fan-out.js bareSdkFanOut).
  rows.push({ framework: 'openai SDK alone (the floor)', ...(await fanOutOf(slow, () => bareSdkFanOut(slow, tasks))), overheadMs: null });
  const ours = await fanOutOf(slow, () => delegateRunFanOut(slow, tasks));
  const { oursMs, bareMs } = await overheadPerCall(fast, overheadCalls);
  rows.push({ framework: 'delegate-run', ...ours, overheadMs: oursMs - bareMs });
  for (const [framework, make] of [
    ['ai (Vercel AI SDK)', vercel],
    ['@openai/agents', agents],
  ]) {
    const peer = make(slow.url);
    const figures = await fanOutOf(slow, peer.fanOut);
    const leafPeer = make(fast.url);
    const bare = bareLeaf(fast.url);
    const bareA = await perCall(bare, overheadCalls);
    const peerA = await perCall(leafPeer.leaf, overheadCalls);
    const bareB = await perCall(bare, overheadCalls);
    const peerB = await perCall(leafPeer.leaf, overheadCalls);
    rows.push({ framework, ...figures, overheadMs: Math.min(peerA, peerB) - Math.min(bareA, bareB) });
  }
} finally {
  await slow.close();
  await fast.close();
}

const vercelRow = rows.find((row) => row.framework.startsWith('ai '));
for (const row of rows) row.promptCharsVsVercel = row.promptChars / vercelRow.promptChars;
if (values.json) {
  process.stdout.write(`${JSON.stringify({ tasks, latencyMs, criticalPathMs: criticalPathMs(latencyMs), rows })}\n`);
} else {
  process.stdout.write(`fan-out: ${tasks} parallel delegates, model latency ${latencyMs} ms, critical path ${criticalPathMs(latencyMs)} ms\n`);
  process.stdout.write(
    '| framework | time / critical path (median, min–max) | overhead per call | requests | prompt characters (× Vercel) |\n|---|---|---|---|---|\n',
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.framework} | ${row.ratioMedian.toFixed(2)}× (${row.ratioMin.toFixed(2)}–${row.ratioMax.toFixed(2)}) | ${row.overheadMs === null ? '—' : `${row.overheadMs.toFixed(2)} ms`} | ${row.requests} | ${row.promptChars.toLocaleString('en')} (${row.promptCharsVsVercel.toFixed(2)}×) |\n`,
    );
  }
}
