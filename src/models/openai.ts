/** The OpenAI provider: chat completions with a json_schema response format (strict where possible), streamed, with our retry policy. */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { ModelError, UsageError } from '../protocol/errors.js';
import type { JsonSchema, Usage } from '../protocol/types.js';
import { throwIfAborted } from './abort.js';
import { zeroUsage, type Model, type ModelRequest, type ModelResponse } from './model.js';
import { isJsonObject, parseModelJson } from './parse-json.js';
import { withRetries } from './retry.js';
import { fromStrictValue, toStrictSchema, type StrictSchemaResult } from './strict-schema.js';
import { StreamedCalls } from './stream-calls.js';
import type { LiveModelOptions } from './live-model-options.js';

/** The official OpenAI API. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * How to reach and use an OpenAI (or OpenAI-compatible: Ollama, vLLM, llama.cpp) model. The key
 * comes from OPENAI_API_KEY and the base URL from OPENAI_BASE_URL in `env` (also OPENAI_ORG_ID,
 * OPENAI_PROJECT_ID).
 */
export type OpenAIModelOptions = LiveModelOptions;

/**
 * A model served through the OpenAI chat-completions API. The Solution schema goes in
 * `response_format` (`json_schema`, named `solution`), in OpenAI's strict subset when it can be
 * expressed (see strict-schema.ts), else as-is with `strict: false`; the answer is mapped back to
 * the original schema. Usage: `inputTokens` counts uncached input only (prompt tokens minus
 * cached and cache-written ones), `cacheReadTokens` the cached ones, `reasoningTokens` the
 * reasoning share of `outputTokens`.
 */
export class OpenAIModel implements Model {
  /** `openai:<model>`. */
  readonly id: string;
  private client: Promise<OpenAI> | undefined;
  private readonly clientOptions: ConstructorParameters<typeof OpenAI>[0];
  private readonly name: string;
  private readonly customServer: boolean;
  private readonly strictSchemas = new WeakMap<object, StrictSchemaResult>();

  constructor(private readonly options: OpenAIModelOptions) {
    const env = options.env ?? {};
    const baseURL = options.baseUrl ?? env.OPENAI_BASE_URL ?? OPENAI_DEFAULT_BASE_URL;
    this.customServer = baseURL.replace(/\/+$/, '') !== OPENAI_DEFAULT_BASE_URL;
    let apiKey = options.apiKey ?? env.OPENAI_API_KEY;
    if (!apiKey) {
      // Local OpenAI-compatible servers usually need no key, but the SDK insists on one.
      if (!this.customServer) {
        throw new UsageError(
          `Cannot use the model "openai:${options.model}": OPENAI_API_KEY is not set. Set it, or pass --base-url (OPENAI_BASE_URL) for an OpenAI-compatible server.`,
        );
      }
      apiKey = 'not-needed';
    }
    this.name = options.model;
    this.id = `openai:${options.model}`;
    this.clientOptions = {
      apiKey,
      baseURL,
      organization: env.OPENAI_ORG_ID ?? null,
      project: env.OPENAI_PROJECT_ID ?? null,
      maxRetries: 0, // the retry policy is ours (retry.ts)
      timeout: options.timeoutMs ?? 600_000,
    };
  }

  /** The SDK client, loaded on first use so offline runs never pay for loading the SDK. */
  private sdk(): Promise<OpenAI> {
    this.client ??= import('openai').then(({ default: Client }) => new Client(this.clientOptions));
    return this.client;
  }

  /** Asks for a Solution; retries transient failures; streams calls to `onCall`. */
  async generate(request: ModelRequest): Promise<ModelResponse> {
    throwIfAborted(request.signal);
    const strict = this.strictFor(request.schema);
    const body: ChatCompletionCreateParamsBase = {
      model: this.name,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
      response_format: { type: 'json_schema', json_schema: { name: 'solution', schema: strict.schema as Record<string, unknown>, strict: strict.strict } },
    };
    if (typeof request.config.temperature === 'number') body.temperature = request.config.temperature;
    if (typeof request.config.maxTokens === 'number') {
      // OpenAI's own API renamed the field; compatible servers mostly know only the old name.
      if (this.customServer) body.max_tokens = request.config.maxTokens;
      else body.max_completion_tokens = request.config.maxTokens;
    }
    let calls = new StreamedCalls(request);
    return withRetries(
      async () => {
        calls = new StreamedCalls(request, (call) => mapCall(call, request.schema));
        const answer = this.options.stream === false ? await this.whole(body, request) : await this.streamed(body, request, calls);
        return this.respond(answer, request, calls);
      },
      { provider: 'OpenAI', signal: request.signal, ...this.options.retry, canRetry: () => calls.count === 0 },
    );
  }

  private strictFor(schema: JsonSchema): StrictSchemaResult {
    if (!isJsonObject(schema)) return toStrictSchema(schema);
    let result = this.strictSchemas.get(schema);
    if (!result) {
      result = toStrictSchema(schema);
      this.strictSchemas.set(schema, result);
    }
    return result;
  }

  private async whole(body: ChatCompletionCreateParamsBase, request: ModelRequest): Promise<RawAnswer> {
    const completion = await (await this.sdk()).chat.completions.create({ ...body, stream: false }, { signal: request.signal });
    const message = completion.choices[0]?.message;
    return { text: message?.content ?? '', refusal: message?.refusal ?? '', usage: completion.usage, model: completion.model };
  }

  private async streamed(body: ChatCompletionCreateParamsBase, request: ModelRequest, calls: StreamedCalls): Promise<RawAnswer> {
    const stream = await (await this.sdk()).chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { signal: request.signal },
    );
    const answer: RawAnswer = { text: '', refusal: '' };
    for await (const chunk of stream) {
      answer.model ??= chunk.model;
      if (chunk.usage) answer.usage = chunk.usage;
      const delta = chunk.choices[0]?.delta;
      if (delta?.refusal) answer.refusal += delta.refusal;
      if (delta?.content) {
        answer.text += delta.content;
        calls.push(delta.content);
      }
    }
    // The SDK ends an aborted stream quietly; an aborted answer is no answer.
    throwIfAborted(request.signal);
    return answer;
  }

  private respond(answer: RawAnswer, request: ModelRequest, calls: StreamedCalls): ModelResponse {
    if (answer.refusal && !answer.text) throw new ModelError('model_error', `The OpenAI model ${this.name} refused to answer: ${answer.refusal}`);
    const parsed = parseModelJson(answer.text);
    const solution = parsed.ok ? fromStrictValue(parsed.value, request.schema) : undefined;
    calls.finish(solution);
    const usage = normalizeOpenAIUsage(answer.usage);
    return {
      text: answer.text,
      solution,
      model: `openai:${answer.model || this.name}`,
      usage,
      costUsd: this.options.registry?.costOf(this.id, usage) ?? null,
    };
  }
}

interface RawAnswer {
  text: string;
  refusal: string;
  usage?: CompletionUsage | null | undefined;
  model?: string;
}

/** Maps one streamed call back from the strict form (it is an element of the root's `calls`). */
function mapCall(call: unknown, schema: JsonSchema): unknown {
  const mapped = fromStrictValue({ calls: [call] }, schema);
  return isJsonObject(mapped) && Array.isArray(mapped.calls) ? mapped.calls[0] : call;
}

/** Normalises OpenAI usage: `inputTokens` excludes cached (`cacheReadTokens`) and cache-written (`cacheWriteTokens`) prompt tokens. */
export function normalizeOpenAIUsage(usage: CompletionUsage | null | undefined): Usage {
  if (!usage) return zeroUsage();
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  const result: Usage = {
    inputTokens: Math.max(0, (usage.prompt_tokens ?? 0) - cached - written),
    outputTokens: usage.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
  };
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') result.reasoningTokens = reasoning;
  return result;
}
