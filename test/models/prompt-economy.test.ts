/**
 * The prompt economy of the fan-out benchmark (bench/fan-out), pinned on the bodies an OpenAI
 * loopback server receives: what a worker call and the whole fan-out of 100 tasks cost in prompt
 * characters, counted as bench/loopback-model.js counts them, for plain-text workers and structured
 * ones, and that strict structured output stays on where the answer has structure (MSG-27 to MSG-33,
 * PLAN-15, TOOL-23).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/create-runtime.js';
import { OpenAIModel } from '../../src/models/openai.js';
import { sse, startServer, type LoopbackServer, type ReceivedRequest } from './support/loopback.js';
import { openAIStreamEvents } from './support/openai-wire.js';

const FOLDER = fileURLToPath(new URL('../../bench/fan-out/', import.meta.url));
const TASKS = 100;

let server: LoopbackServer | undefined;
/** What the loopback server received for one run of the fan-out, and of its structured variant, shared by the tests below. */
let requests: ReceivedRequest[] = [];
let structured: ReceivedRequest[] = [];
beforeAll(async () => {
  requests = await fanOut('orchestrator.json');
  await server?.close();
  structured = await fanOut('orchestrator-structured.json');
});
afterAll(async () => {
  await server?.close();
  server = undefined;
});

/** Characters the model reads, as the benchmark's loopback model counts them: message text, tool definitions, the response schema. */
function promptChars(body: ReceivedRequest['body']): number {
  let chars = 0;
  for (const message of body.messages ?? []) {
    if (typeof message.content === 'string') chars += message.content.length;
    else for (const part of message.content ?? []) chars += part.text?.length ?? 0;
  }
  if (body.tools) chars += JSON.stringify(body.tools).length;
  if (body.response_format?.json_schema) chars += JSON.stringify(body.response_format.json_schema.schema).length;
  return chars;
}

const taskOf = (n: number) => `Summarize section ${n} of the quarterly report in one sentence.`;

/** The benchmark's answers: the orchestrator fans out, then finishes once the results are in; each worker answers its result as text. */
function answerOf(request: ReceivedRequest): string {
  const text = JSON.stringify(request.body.messages);
  if (text.includes('Delegate every task')) {
    if (text.includes('task-result-')) return JSON.stringify({ calls: [], output: 'done' });
    const calls = Array.from({ length: TASKS }, (_, n) => ({ _tool: 'task', task: taskOf(n), _outputPath: '†state.results', _outputMethod: 'push' }));
    return JSON.stringify({ calls, output: null });
  }
  const result = `task-result-${/section (\d+) /.exec(text)?.[1] ?? '?'}`;
  // A structured worker is asked for its output object itself (MSG-32).
  return request.body.response_format ? JSON.stringify({ text: result }) : result;
}

async function fanOut(orchestrator: string): Promise<ReceivedRequest[]> {
  server = await startServer([(request, response) => sse(openAIStreamEvents([answerOf(request)]))(request, response)]);
  const runtime = createRuntime({ root: FOLDER });
  const request = await runtime.load(`${FOLDER}${orchestrator}`);
  const result = await runtime.run(request, { model: new OpenAIModel({ model: 'gpt-4.1-mini', baseUrl: `${server.url}/v1`, env: {} }) });
  expect(result.ok && result.output).toBe('done');
  return server.requests;
}

describe('the prompt economy of the fan-out benchmark', () => {
  it('sends a worker its system text and its input, and no schema: its answer is plain text (MSG-27, MSG-28)', () => {
    const workers = requests.filter((request) => !JSON.stringify(request.body.messages).includes('Delegate every task'));
    expect(workers).toHaveLength(TASKS);
    const worker = workers[0]!.body;
    expect(worker.response_format).toBeUndefined();
    expect(worker.messages.map((message: { role: string }) => message.role)).toEqual(['system', 'user']);
    // 210 characters on 2026-11-28 (219 before MSG-33; 425 before MSG-27, MSG-28 and MSG-30).
    expect(Math.max(...workers.map((request) => promptChars(request.body)))).toBeLessThanOrEqual(215);
  });

  it('asks a structured worker for its output object itself, strict, with no Solution wrapper (MSG-32)', () => {
    const workers = structured.filter((request) => !JSON.stringify(request.body.messages).includes('Delegate every task'));
    expect(workers).toHaveLength(TASKS);
    const format = workers[0]!.body.response_format;
    expect(format.json_schema).toMatchObject({ name: 'output', strict: true });
    expect(format.json_schema.schema).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
    // 316 characters on 2026-11-28, against the Vercel AI SDK's 357 with Output.object (446 before MSG-32 and MSG-33).
    expect(Math.max(...workers.map((request) => promptChars(request.body)))).toBeLessThanOrEqual(320);
    const total = structured.reduce((sum, request) => sum + promptChars(request.body), 0);
    // 44,252 characters on 2026-11-28 (64,809 before): 0.95 times the Vercel AI SDK's 46,478 (`npm run bench:peers`, target 1.1).
    expect(total).toBeLessThanOrEqual(44_500);
  });

  it('keeps the whole fan-out at the prompt characters it takes now, the orchestrator in strict mode', () => {
    expect(requests).toHaveLength(TASKS + 2);
    const orchestrator = requests.filter((request) => JSON.stringify(request.body.messages).includes('Delegate every task'));
    expect(orchestrator).toHaveLength(2);
    for (const request of orchestrator) expect(request.body.response_format.json_schema.strict).toBe(true);
    const total = requests.reduce((sum, request) => sum + promptChars(request.body), 0);
    // 32,752 characters on 2026-11-28 (41,209 before PLAN-15's groups, MSG-24's shorter instructions and MSG-33;
    // 64,168 before that): 1.11 times the 29,578 of the Vercel AI SDK's requests for the same tasks
    // (`npm run bench:peers`); this bound keeps it from growing back.
    expect(total).toBeLessThanOrEqual(33_000);
  });
});
