// The loopback model of the benchmarks: an OpenAI-compatible chat-completions server on 127.0.0.1 in a process of its own, answering after a latency.
// Usage: node bench/loopback-model.js --latency <ms> --tasks <n>. Prints its URL on stdout; GET /stats gives what it was asked, POST /reset clears it.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { latency: { type: 'string', default: '200' }, tasks: { type: 'string', default: '100' } } });
const latencyMs = Number(values.latency);
let tasks = Number(values.tasks);
let stats = { requests: 0, promptChars: 0, connections: 0, byKind: {} };

/** Characters the model reads: every message's text, the tool definitions and the response format. */
function promptCharsOf(body) {
  let chars = 0;
  for (const message of body.messages ?? []) {
    if (typeof message.content === 'string') chars += message.content.length;
    else if (Array.isArray(message.content)) for (const part of message.content) chars += part.text?.length ?? 0;
    for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  if (body.tools) chars += JSON.stringify(body.tools).length;
  if (body.response_format?.json_schema) chars += JSON.stringify(body.response_format.json_schema.schema).length;
  return chars;
}

function textOf(body) {
  return (body.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))).join('\n');
}

/** The text of task `n`, the same for every framework. */
function taskText(n) {
  return `Summarize section ${n} of the quarterly report in one sentence.`;
}

/** What to answer: the orchestrator fans out `tasks` tasks, then finishes once it has their results; a worker answers its task's result. */
function answerOf(body) {
  const schema = body.response_format?.json_schema?.schema;
  const text = textOf(body);
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    // A peer's orchestrator: tool calls, then the final text once the tool results are in.
    if (body.messages.some((message) => message.role === 'tool')) return { kind: 'orchestrator-final', content: 'done' };
    const calls = Array.from({ length: tasks }, (_, n) => ({
      id: `call_${n}`,
      type: 'function',
      function: { name: body.tools[0].function.name, arguments: JSON.stringify({ task: taskText(n) }) },
    }));
    return { kind: 'orchestrator-fan-out', toolCalls: calls };
  }
  if (schema && text.includes('Delegate every task')) {
    // delegate-run's orchestrator: calls first, then the output once results are in its context.
    if (text.includes('task-result-')) return { kind: 'orchestrator-final', content: JSON.stringify({ calls: [], output: 'done' }) };
    const calls = Array.from({ length: tasks }, (_, n) => ({ _tool: 'task', task: taskText(n), _outputPath: '†state.results', _outputMethod: 'push' }));
    return { kind: 'orchestrator-fan-out', content: JSON.stringify({ calls, output: null }) };
  }
  const n = /section (\d+) /.exec(text);
  const result = `task-result-${n ? n[1] : '?'}`;
  if (schema) return { kind: 'worker', content: JSON.stringify(workerAnswer(schema, result)) };
  return { kind: 'worker', content: result };
}

/** A worker's answer to the schema it was sent: delegate-run's Solution `{output}` (with empty `calls` when offered), else the output itself. */
function workerAnswer(schema, result) {
  if (!schema.properties?.output) return resultAs(schema, result);
  const output = resultAs(schema.properties.output.anyOf?.find((branch) => branch.type !== 'null') ?? schema.properties.output, result);
  return schema.properties.calls ? { calls: [], output } : { output };
}

/** The result as a value of `schema`: an object output (the structured variant) holds it as `text`. */
function resultAs(schema, result) {
  return schema.properties?.text ? { text: result } : result;
}

function completion(body, answer) {
  const message = answer.toolCalls ? { role: 'assistant', content: null, tool_calls: answer.toolCalls } : { role: 'assistant', content: answer.content };
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: answer.toolCalls ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function streamed(body, answer, response) {
  const chunk = (choices, extra = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices, ...extra })}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let out = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  if (answer.toolCalls) {
    out += chunk([{ index: 0, delta: { tool_calls: answer.toolCalls.map((call, index) => ({ index, ...call })) }, finish_reason: null }]);
  } else {
    out += chunk([{ index: 0, delta: { content: answer.content }, finish_reason: null }]);
  }
  out += chunk([{ index: 0, delta: {}, finish_reason: answer.toolCalls ? 'tool_calls' : 'stop' }]);
  out += chunk([], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  out += 'data: [DONE]\n\n';
  response.end(out);
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url === '/stats') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(stats));
      return;
    }
    if (request.url?.startsWith('/reset')) {
      const asked = new URL(request.url, 'http://x').searchParams.get('tasks');
      if (asked) tasks = Number(asked);
      stats = { requests: 0, promptChars: 0, connections: 0, byKind: {} };
      response.end('{}');
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const answer = answerOf(body);
    const chars = promptCharsOf(body);
    stats.requests++;
    stats.promptChars += chars;
    stats.byKind[answer.kind] ??= { requests: 0, promptChars: 0 };
    const kind = stats.byKind[answer.kind];
    kind.requests++;
    kind.promptChars += chars;
    const reply = () => {
      if (body.stream) return streamed(body, answer, response);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completion(body, answer)));
    };
    if (latencyMs > 0) setTimeout(reply, latencyMs);
    else reply();
  });
});
server.keepAliveTimeout = 60_000;
// Connections opened since the last reset: a client that reuses kept-alive sockets opens about as many as it has requests in flight at once.
server.on('connection', () => stats.connections++);
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
