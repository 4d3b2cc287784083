/** The OpenAI provider: chat completions with a json_schema response format (strict where possible, with fallbacks), streamed, with our retries and deadlines. */
import type OpenAI from 'openai';
import type { ChatCompletionContentPart, ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { ModelError, UsageError } from '../protocol/errors.js';
import type { JsonSchema } from '../protocol/types.js';
import type { Usage } from '../protocol/usage.js';
import { throwIfAborted } from './abort-error.js';
import type { AttemptDeadline } from './deadline.js';
import { answerCut, callWithRetries, sdkTimeoutMs } from './live-call.js';
import { base64Of, type Model, type ModelRequest, type ModelResponse, type ProviderFile, type ProviderMessage, type SchemaForm } from '../protocol/model.js';
import { zeroUsage } from '../protocol/usage.js';
import { providerFetch } from './provider-fetch.js';
import { solutionOfAnswer } from './parse-json.js';
import { fromStrictValue, schemaFormOf, StrictSchemas, type StrictSchemaResult } from './strict-schema.js';
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

/** The ways of asking for the answer's shape, in the order they are tried (spec/models.md MODEL-5). */
export const OPENAI_RESPONSE_FORMATS = ['json_schema', 'json_object', 'text'] as const;
/** One way of asking for the answer's shape. */
export type OpenAIResponseFormat = (typeof OPENAI_RESPONSE_FORMATS)[number];

/**
 * A model served through the OpenAI chat-completions API. The Solution schema goes in
 * `response_format` (`json_schema`, named `solution`), in OpenAI's strict subset when it can be
 * expressed (see strict-schema.ts), else as-is with `strict: false`; the answer is mapped back to
 * the original schema. A server that refuses that format is asked with `json_object`, then with
 * plain text, the schema then being in the prompt; the fallback is remembered by this model
 * (MODEL-5). Usage: `inputTokens` counts uncached input only (prompt tokens minus cached and
 * cache-written ones), `cacheReadTokens` the cached ones, `reasoningTokens` the reasoning share of
 * `outputTokens`.
 */
export class OpenAIModel implements Model {
  /** `openai:<model>`. */
  readonly id: string;
  private client: Promise<OpenAI> | undefined;
  private readonly clientOptions: ConstructorParameters<typeof OpenAI>[0];
  private readonly name: string;
  private readonly customServer: boolean;
  private readonly strictSchemas = new StrictSchemas('openai');
  private responseFormat: OpenAIResponseFormat = 'json_schema';
  /** The server's words when it refused a response format, which stepped this model down (MODEL-17). */
  private steppedDownBecause: string | undefined;

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
      maxRetries: 0, // the retry policy and the deadlines are ours (live-call.ts)
      timeout: sdkTimeoutMs(options),
      // The SDK would print what it could not parse to stderr; the failure reaches us as an error.
      logLevel: 'off',
      // Sent without fetch's per-request copy of the body (MODEL-10).
      fetch: providerFetch,
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
    // Loaded before the first deadline starts: loading the SDK is not the server's delay.
    const sdk = await this.sdk();
    return callWithRetries('OpenAI', request, this.options, async (deadline, counted) => {
      // The answer is the output's text (MSG-28): no response format, nothing to fall back from.
      if (request.plainText) return this.plain(sdk, request, deadline);
      for (;;) {
        const format = this.responseFormat;
        const strict = format === 'json_schema' ? this.strictFor(request.schema) : undefined;
        // The output object itself (MSG-32): its strict form is the response format, and the answer has no calls to stream.
        const output = format === 'json_schema' ? this.strictSchemas.ofOutput(request.outputSchema) : undefined;
        const sent = output ?? strict;
        const shape = output ? (request.outputSchema as JsonSchema) : request.schema;
        const decode = sent?.strict ? (value: unknown) => fromStrictValue(value, shape, sent.encodedNodes) : undefined;
        const calls = output ? undefined : new StreamedCalls(counted, decode);
        const body = this.body(request, format, sent, output !== undefined);
        try {
          const answer = this.options.stream === false ? await this.whole(sdk, body, deadline) : await this.streamed(sdk, body, deadline, calls);
          return this.respond(answer, request, calls, format, decode, this.formOf(format, strict), output !== undefined);
        } catch (error) {
          const next = OPENAI_RESPONSE_FORMATS[OPENAI_RESPONSE_FORMATS.indexOf(format) + 1];
          if (next === undefined || !rejectsResponseFormat(error)) throw error;
          // Parallel calls may have stepped down already; never step back up.
          if (this.responseFormat === format) {
            this.responseFormat = next;
            this.steppedDownBecause = `the server refused ${format}: ${error instanceof Error ? error.message : String(error)}`;
          }
        }
      }
    });
  }

  /** A plain-text answer (MSG-28): the request without a response format, its text the output, which has no calls to stream. */
  private async plain(sdk: OpenAI, request: ModelRequest, deadline: AttemptDeadline): Promise<ModelResponse> {
    const body = this.configured(request, { model: this.name, messages: request.messages.map(openAIMessage) });
    const answer = this.options.stream === false ? await this.whole(sdk, body, deadline) : await this.streamed(sdk, body, deadline);
    return this.respond(answer, request, undefined, 'plain_text', undefined, undefined, false);
  }

  /** The form in which the schema of `request` goes out now (MODEL-17). */
  schemaFormOf(request: Pick<ModelRequest, 'schema' | 'plainText'>): SchemaForm | undefined {
    if (request.plainText) return undefined;
    return this.formOf(this.responseFormat, this.responseFormat === 'json_schema' ? this.strictFor(request.schema) : undefined);
  }

  private formOf(format: OpenAIResponseFormat, strict: StrictSchemaResult | undefined): SchemaForm {
    if (format !== 'json_schema') {
      return { form: format === 'json_object' ? 'json_object' : 'prompt_only', ...(this.steppedDownBecause ? { reason: this.steppedDownBecause } : {}) };
    }
    return schemaFormOf(strict ?? { strict: false, encoded: [] });
  }

  private body(request: ModelRequest, format: OpenAIResponseFormat, strict: StrictSchemaResult | undefined, asOutput = false): ChatCompletionCreateParamsBase {
    const messages = request.messages.map(openAIMessage);
    const body: ChatCompletionCreateParamsBase = { model: this.name, messages };
    if (strict) {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: asOutput ? 'output' : 'solution', schema: strict.schema as Record<string, unknown>, strict: strict.strict },
      };
    } else {
      // Without json_schema the server does not know the schema: the prompt says it.
      const instruction = `Answer with one JSON object and nothing else. It must match this JSON Schema:\n${JSON.stringify(request.schema)}`;
      const first = messages[0];
      if (first?.role === 'system') messages[0] = { role: 'system', content: `${first.content}\n\n${instruction}` };
      else messages.unshift({ role: 'system', content: instruction });
      if (format === 'json_object') body.response_format = { type: 'json_object' };
    }
    return this.configured(request, body);
  }

  /** The body with the Request's provider settings (temperature, the answer's length limit). */
  private configured(request: ModelRequest, body: ChatCompletionCreateParamsBase): ChatCompletionCreateParamsBase {
    if (typeof request.config.temperature === 'number') body.temperature = request.config.temperature;
    if (typeof request.config.maxTokens === 'number') {
      // OpenAI's own API renamed the field; compatible servers mostly know only the old name.
      if (this.customServer) body.max_tokens = request.config.maxTokens;
      else body.max_completion_tokens = request.config.maxTokens;
    }
    return body;
  }

  private strictFor(schema: JsonSchema): StrictSchemaResult {
    return this.strictSchemas.of(schema);
  }

  private async whole(sdk: OpenAI, body: ChatCompletionCreateParamsBase, deadline: AttemptDeadline): Promise<RawAnswer> {
    const completion = await sdk.chat.completions.create(Object.assign({}, body, { stream: false as const }), { signal: deadline.signal });
    const choice = completion.choices[0];
    return {
      text: choice?.message?.content ?? '',
      refusal: choice?.message?.refusal ?? '',
      usage: completion.usage,
      model: completion.model,
      finishReason: choice?.finish_reason,
    };
  }

  private async streamed(sdk: OpenAI, body: ChatCompletionCreateParamsBase, deadline: AttemptDeadline, calls?: StreamedCalls): Promise<RawAnswer> {
    const stream = await sdk.chat.completions.create(Object.assign({}, body, { stream: true as const, stream_options: { include_usage: true } }), {
      signal: deadline.signal,
    });
    const answer: RawAnswer = { text: '', refusal: '' };
    for await (const chunk of stream) {
      deadline.chunk();
      answer.model ??= chunk.model;
      if (chunk.usage) answer.usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.finish_reason) answer.finishReason = choice.finish_reason;
      const delta = choice?.delta;
      if (delta?.refusal) answer.refusal += delta.refusal;
      if (delta?.content) {
        answer.text += delta.content;
        calls?.push(delta.content);
      }
    }
    // The SDK ends an aborted stream quietly; an aborted answer is no answer.
    deadline.check();
    return answer;
  }

  private respond(
    answer: RawAnswer,
    request: ModelRequest,
    calls: StreamedCalls | undefined,
    format: OpenAIResponseFormat | 'plain_text',
    decode: ((value: unknown) => unknown) | undefined,
    schemaForm: SchemaForm | undefined,
    asOutput: boolean,
  ): ModelResponse {
    if (answer.refusal && !answer.text) throw new ModelError('model_error', `The OpenAI model ${this.name} refused to answer: ${answer.refusal}`);
    if (answer.finishReason === 'length')
      throw answerCut(this.id, typeof request.config.maxTokens === 'number' ? request.config.maxTokens : undefined, 'config.maxTokens', answer.text);
    const solution = solutionOfAnswer(answer.text, request.plainText, decode, asOutput);
    calls?.finish(solution);
    const usage = normalizeOpenAIUsage(answer.usage);
    return {
      text: answer.text,
      solution,
      model: `openai:${answer.model || this.name}`,
      usage,
      costUsd: this.options.registry?.costOf(this.id, usage) ?? null,
      responseFormat: format,
      ...(schemaForm ? { schemaForm } : {}),
    };
  }
}

/**
 * Whether an error is a server refusing the response format, not the request as a whole. The
 * heuristic (MODEL-5): a 400 or 422 answer whose message names `response_format`, `json_schema`,
 * `json_object` or structured output. Servers that lack the feature say so in those words (vLLM,
 * llama.cpp, LM Studio, OpenAI itself for a schema it cannot use); other 400s do not fall back.
 */
export function rejectsResponseFormat(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  if (status !== 400 && status !== 422) return false;
  const message = error instanceof Error ? error.message : String(error);
  return /response_format|json_schema|json_object|structured output/i.test(message);
}

interface RawAnswer {
  text: string;
  refusal: string;
  usage?: CompletionUsage | null | undefined;
  model?: string;
  finishReason?: string | null | undefined;
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

/** An image as an `image_url` part, a PDF as a `file` part, both as base64 data URLs (ATT-6). */
function openAIPart(file: ProviderFile): ChatCompletionContentPart {
  const url = `data:${file.mediaType};base64,${base64Of(file)}`;
  if (file.mediaType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
  return { type: 'file', file: { filename: file.path, file_data: url } };
}

/** A message on the wire: its text, and on a user message with files, content parts text first (ATT-6). */
function openAIMessage(message: ProviderMessage): ChatCompletionMessageParam {
  if (message.role !== 'user' || message.files === undefined || message.files.length === 0) return { role: message.role, content: message.content };
  return { role: 'user', content: [{ type: 'text', text: message.content }, ...message.files.map(openAIPart)] };
}
