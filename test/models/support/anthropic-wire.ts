/** The Anthropic messages wire format for loopback servers: whole answers and SSE streams. */
import { json, sse, type Handler, type StreamScript } from './loopback.js';

/** Anthropic's usage object. */
export interface AnthropicWireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens: number } | null;
}

/** Builds Anthropic usage. */
export function anthropicUsage(input: number, output: number, cacheRead = 0, cacheWrite = 0): AnthropicWireUsage {
  return { input_tokens: input, output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite };
}

/** A whole message whose single content block is a `solution` tool_use with `input`. */
export function anthropicMessage(input: unknown, usage: AnthropicWireUsage = anthropicUsage(10, 5), model = 'claude-haiku-4-5-20251001'): Handler {
  return json(200, {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'solution', input }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage,
  });
}

const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** The `message_start` event every streamed message opens with. */
function messageStart(usage: AnthropicWireUsage, model: string): string {
  return event('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
}

/** The SSE events of a streamed message: the tool input JSON arrives in `jsonPieces`. */
export function anthropicStreamEvents(
  jsonPieces: string[],
  usage: AnthropicWireUsage = anthropicUsage(10, 5),
  model = 'claude-haiku-4-5-20251001',
  stopReason = 'tool_use',
): string[] {
  return [
    messageStart(usage, model),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'solution', input: {} } }),
    event('ping', { type: 'ping' }),
    ...jsonPieces.map((partial) =>
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: partial } }),
    ),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens, output_tokens_details: usage.output_tokens_details ?? null },
    }),
    event('message_stop', { type: 'message_stop' }),
  ];
}

/** A streamed message. */
export function anthropicStream(jsonPieces: string[], usage?: AnthropicWireUsage, script?: StreamScript): Handler {
  return sse(anthropicStreamEvents(jsonPieces, usage), script);
}

/** An Anthropic error body. */
export function anthropicError(status: number, message: string, headers: Record<string, string> = {}): Handler {
  const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  return json(status, { type: 'error', error: { type, message } }, headers);
}

/** A streamed message whose single content block is text arriving in `textPieces` (a plain-text answer, MSG-28). */
export function anthropicTextStream(textPieces: string[], usage: AnthropicWireUsage = anthropicUsage(10, 5), model = 'claude-haiku-4-5-20251001'): Handler {
  return sse([
    messageStart(usage, model),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...textPieces.map((text) => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }),
    event('message_stop', { type: 'message_stop' }),
  ]);
}
