// The fan-out workload of the benchmarks: an orchestrator delegating N tasks at once to a worker Request, against the loopback model (loopback-model.js) in a process of its own.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The system texts and the tool of the workload, shared with the peers (bench/peers) so every framework is asked the same. */
export const WORKLOAD = {
  orchestratorSystem: 'You coordinate analysts. Delegate every task at once, then answer "done" when all results are in.',
  workerSystem: 'You are a careful analyst. Do the one task you are given, using only what it says, and answer with the result in a single short paragraph.',
  toolName: 'task',
  toolDescription: 'Does one task.',
};

/**
 * The variants of the workload: `plain`, whose worker answers text, and `structured`, whose worker
 * answers an object `{"text": string}` (delegate-run's worker-structured.json; a peer's structured
 * output: the Vercel AI SDK's `Output.object`, the OpenAI Agents SDK's `outputType`).
 */
export const VARIANTS = ['plain', 'structured'];

/** Starts the loopback model in a child process: `{url, stats(), reset(tasks), close()}`. */
export async function startLoopback({ latencyMs, tasks }) {
  const child = spawn(process.execPath, [resolve(here, 'loopback-model.js'), '--latency', String(latencyMs), '--tasks', String(tasks)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout.setEncoding('utf8');
  while (!text.includes('\n')) {
    const [chunk] = await once(child.stdout, 'data');
    text += chunk;
  }
  const url = text.trim();
  return {
    url,
    async stats() {
      return (await fetch(`${url}/stats`)).json();
    },
    async reset(count = tasks) {
      await fetch(`${url}/reset?tasks=${count}`, { method: 'POST' });
    },
    async close() {
      child.stdin.end();
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The critical path of the workload: orchestrator step, worker, orchestrator step. */
export function criticalPathMs(latencyMs) {
  return 3 * latencyMs;
}

/** Runs the workload (of `variant`, VARIANTS) once on delegate-run (library, built dist/): wall time and what the model was asked; with `journal`, journaled to that file (JOURNAL-1). */
export async function delegateRunFanOut(loopback, tasks, { maxConcurrency, maxRuns, journal, variant = 'plain' } = {}) {
  const { OpenAIModel, createRuntime } = await import('../dist/index.js');
  const folder = resolve(here, 'fan-out');
  const runtime = createRuntime({ root: folder });
  const request = await runtime.load(resolve(folder, variant === 'structured' ? 'orchestrator-structured.json' : 'orchestrator.json'));
  const model = new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${loopback.url}/v1`, env: {} });
  await loopback.reset(tasks);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await runtime.run(request, {
    model,
    ...(maxConcurrency ? { maxConcurrency } : {}),
    ...(maxRuns ? { maxRuns } : {}),
    ...(journal ? { journal } : {}),
  });
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (!result.ok) throw new Error(`the fan-out failed: ${result.error.code}: ${result.error.message}`);
  // CPU time is this process's own, so it says what a delegate costs even when the machine is busy and wall times are not.
  return { ms, cpuMs: (used.user + used.system) / 1000, ...(await loopback.stats()) };
}

/** The structured variant's output as a strict response format: what the floor's worker asks for. */
const STRUCTURED_OUTPUT = {
  name: 'output',
  schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  strict: true,
};

/**
 * The floor of the fan-out on this machine: the same workload written straight against the `openai`
 * SDK, with no framework at all: the orchestrator's request with the task tool, every task's request
 * at once (`Promise.all`), then the orchestrator's request with the results. Requests are not
 * streamed (`stream: false`, as the peers send them), the cheapest form the SDK has; the texts are
 * the workload's, the shortest any framework could send; in the `structured` variant a worker asks
 * for its object with a strict response format. No framework built on this SDK, in this
 * process, can finish the workload faster than this does, so it says how much of a fan-out figure
 * is the SDK, the HTTP client, the kernel and the loopback model, and how much is ours.
 */
export async function bareSdkFanOut(loopback, tasks, { variant = 'plain' } = {}) {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'not-needed', baseURL: `${loopback.url}/v1`, maxRetries: 0 });
  const tools = [
    {
      type: 'function',
      function: {
        name: WORKLOAD.toolName,
        description: WORKLOAD.toolDescription,
        parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'], additionalProperties: false },
      },
    },
  ];
  const messages = [
    { role: 'system', content: WORKLOAD.orchestratorSystem },
    { role: 'user', content: 'Start.' },
  ];
  await loopback.reset(tasks);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const first = (await client.chat.completions.create({ model: 'gpt-4.1-mini', messages, tools })).choices[0].message;
  const results = await Promise.all(
    first.tool_calls.map(async (call) => {
      const { task } = JSON.parse(call.function.arguments);
      const answer = await client.chat.completions.create({
        model: 'gpt-4.1-mini',
        messages: [
          { role: 'system', content: WORKLOAD.workerSystem },
          { role: 'user', content: task },
        ],
        ...(variant === 'structured' ? { response_format: { type: 'json_schema', json_schema: STRUCTURED_OUTPUT } } : {}),
      });
      return { role: 'tool', tool_call_id: call.id, content: answer.choices[0].message.content };
    }),
  );
  const last = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages: [...messages, first, ...results], tools });
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (last.choices[0].message.content !== 'done') throw new Error('the bare fan-out did not finish');
  return { ms, cpuMs: (used.user + used.system) / 1000, ...(await loopback.stats()) };
}

/** The text of task `n`, as the loopback model's orchestrator writes it. */
export function taskOf(n) {
  return `Summarize section ${n} of the quarterly report in one sentence.`;
}

/** The leaf Request of the overhead figure: one step, no tools. */
const leaf = {
  meta: { name: 'leaf' },
  context: [
    { type: 'system', text: WORKLOAD.workerSystem },
    { type: 'input', schema: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] } },
  ],
  schema: { type: 'string' },
};

/**
 * The overhead per model call on the real OpenAI SDK path: `calls` leaf runs one after the other
 * against a zero-latency loopback model, against a bare `openai` SDK loop sending the same bodies
 * (streamed, read whole, parsed). Returns both times per call.
 */
export async function overheadPerCall(loopback, calls) {
  const { OpenAIModel, Runtime } = await import('../dist/index.js');
  const { default: OpenAI } = await import('openai');
  const runtime = new Runtime();
  const document = runtime.validate(leaf);
  const model = new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${loopback.url}/v1`, env: {} });
  const bodies = [];
  const ours = async (n) => {
    const result = await runtime.run(document, { model, input: { task: taskOf(n) } });
    if (!result.ok) throw new Error(result.error.message);
  };
  // The bodies the bare loop sends: what delegate-run sent, captured once from its trace.
  const { memorySink, Tracer } = await import('../dist/index.js');
  const { toStrictSchema } = await import('../dist/models/strict-schema.js');
  const { answersInPlainText } = await import('../dist/protocol/tools/tools.js');
  const sink = memorySink();
  await runtime.run(document, { model, input: { task: taskOf(0) }, tracer: new Tracer([sink]) });
  const client = new OpenAI({ apiKey: 'not-needed', baseURL: `${loopback.url}/v1`, maxRetries: 0 });
  const requestEvent = sink.events.find((event) => event.event === 'model.request');
  const strict = toStrictSchema(requestEvent.schema);
  // A leaf whose output is a plain string is asked for plain text, with no response format (MSG-28).
  const plain = answersInPlainText(requestEvent.schema);
  for (let n = 0; n < calls; n++) {
    bodies.push({
      model: 'gpt-4.1-mini',
      messages: requestEvent.messages.map(({ role, content }) => ({ role, content: content.replace(taskOf(0), taskOf(n)) })),
      ...(plain ? {} : { response_format: { type: 'json_schema', json_schema: { name: 'solution', schema: strict.schema, strict: strict.strict } } }),
      stream: true,
      stream_options: { include_usage: true },
    });
  }
  const bare = async (n) => {
    const stream = await client.chat.completions.create(bodies[n]);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    if (!plain) JSON.parse(text);
  };
  const timeOf = async (body) => {
    for (let n = 0; n < 50; n++) await body(n % calls); // warm-up
    const started = performance.now();
    for (let n = 0; n < calls; n++) await body(n);
    return (performance.now() - started) / calls;
  };
  // Alternated twice, so neither side gains from going second.
  const bareA = await timeOf(bare);
  const oursA = await timeOf(ours);
  const bareB = await timeOf(bare);
  const oursB = await timeOf(ours);
  return { oursMs: Math.min(oursA, oursB), bareMs: Math.min(bareA, bareB) };
}
