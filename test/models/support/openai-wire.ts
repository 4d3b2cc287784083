/** The OpenAI chat-completions wire format for loopback servers: whole answers and SSE streams. */
import { json, sse, type Handler, type StreamScript } from './loopback.js';

/** OpenAI's usage object. */
export interface OpenAIWireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** Builds OpenAI usage from normalised figures. */
export function openAIUsage(input: number, output: number, cached = 0, reasoning?: number): OpenAIWireUsage {
  return {
    prompt_tokens: input + cached,
    completion_tokens: output,
    total_tokens: input + cached + output,
    prompt_tokens_details: { cached_tokens: cached },
    ...(reasoning !== undefined && { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}

/** A whole chat completion whose message content is `content`. */
export function openAICompletion(
  content: string,
  usage: OpenAIWireUsage = openAIUsage(10, 5),
  model = 'gpt-4.1-mini-2025-04-14',
  finishReason = 'stop',
): Handler {
  return json(200, {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: finishReason, logprobs: null }],
    usage,
  });
}

/** The SSE events of a streamed completion: one content delta per piece, then the usage chunk, then [DONE]. */
export function openAIStreamEvents(
  contentPieces: string[],
  usage: OpenAIWireUsage = openAIUsage(10, 5),
  model = 'gpt-4.1-mini-2025-04-14',
  finishReason = 'stop',
): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices, ...extra })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    ...contentPieces.map((piece) => chunk([{ index: 0, delta: { content: piece }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
    chunk([], { usage }),
    'data: [DONE]\n\n',
  ];
}

/** A streamed completion. */
export function openAIStream(contentPieces: string[], usage?: OpenAIWireUsage, script?: StreamScript): Handler {
  return sse(openAIStreamEvents(contentPieces, usage), script);
}

/** An OpenAI error body. */
export function openAIError(status: number, message: string, headers: Record<string, string> = {}): Handler {
  const type = status === 429 ? 'rate_limit_exceeded' : status < 500 ? 'invalid_request_error' : 'server_error';
  return json(status, { error: { message, type, code: null } }, headers);
}
