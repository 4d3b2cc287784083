/** The Anthropic provider: the Solution as the input of a forced `solution` tool, streamed, with our retries and deadlines. */
import type Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  Usage as AnthropicUsage,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { ModelError, UsageError } from '../protocol/errors.js';
import type { Usage } from '../protocol/usage.js';
import { throwIfAborted } from './abort-error.js';
import type { AttemptDeadline } from './deadline.js';
import { answerCut, callWithRetries, sdkTimeoutMs } from './live-call.js';
import { base64Of, type Model, type ModelRequest, type ModelResponse, type ProviderFile, type ProviderMessage, type SchemaForm } from '../protocol/model.js';
import { zeroUsage } from '../protocol/usage.js';
import { isJsonObject, type JsonSchema } from '../protocol/types.js';
import { fromStrictValue, schemaFormOf, StrictSchemas, type StrictSchemaResult } from './strict-schema.js';
import { providerFetch } from './provider-fetch.js';
import { solutionOfAnswer } from './parse-json.js';
import { EMPTY_PROMPT } from '../protocol/constants.js';
import { StreamedCalls } from './stream-calls.js';
import type { LiveModelOptions } from './live-model-options.js';

/** The official Anthropic API. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** The answer length when neither the Request (`config.maxTokens`) nor the options set one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;
/** The name of the forced tool whose input is the Solution. */
export const SOLUTION_TOOL = 'solution';

const SOLUTION_TOOL_DESCRIPTION =
  'Give your answer for this step: the calls to make (each with its "_tool" and parameters) and the output (null until the final output is known).';
/** The solution tool's description when its input is the output object itself (MSG-32). */
const OUTPUT_TOOL_DESCRIPTION = 'Give your answer.';

/**
 * How to reach and use an Anthropic model. The key comes from ANTHROPIC_API_KEY (or
 * ANTHROPIC_AUTH_TOKEN) and the base URL from ANTHROPIC_BASE_URL in `env`.
 */
export interface AnthropicModelOptions extends LiveModelOptions {
  /** Default `max_tokens` (Anthropic requires one); `config.maxTokens` wins. */
  maxTokens?: number;
  /** Mark the system prompt as a prompt-cache breakpoint (default true): later steps of a run re-read it cheaply. */
  promptCaching?: boolean;
}

/**
 * A model served through the Anthropic messages API. The Solution schema is the `input_schema` of
 * a tool named `solution` that the model is forced to call (`tool_choice: {type: 'tool'}`); its
 * input is the answer, and its JSON text is the response text. System messages go in `system`.
 * `config.temperature` is not sent: the current messages API has no such parameter.
 * Usage: `inputTokens` is Anthropic's `input_tokens` (uncached input), `cacheReadTokens` and
 * `cacheWriteTokens` its `cache_read_input_tokens` and `cache_creation_input_tokens`.
 */
export class AnthropicModel implements Model {
  /** `anthropic:<model>`. */
  readonly id: string;
  private client: Promise<Anthropic> | undefined;
  private readonly clientOptions: ConstructorParameters<typeof Anthropic>[0];
  private readonly strictSchemas = new StrictSchemas('anthropic');
  /** The server's words when it refused a strict tool, after which this model sends none (MODEL-15). */
  private strictRefused: string | undefined;

  constructor(private readonly options: AnthropicModelOptions) {
    const env = options.env ?? {};
    const apiKey = options.apiKey ?? env.ANTHROPIC_API_KEY;
    const authToken = env.ANTHROPIC_AUTH_TOKEN;
    if (!apiKey && !authToken) {
      throw new UsageError(`Cannot use the model "anthropic:${options.model}": ANTHROPIC_API_KEY is not set.`);
    }
    this.id = `anthropic:${options.model}`;
    this.clientOptions = {
      ...(apiKey ? { apiKey } : { authToken: authToken ?? null }),
      baseURL: options.baseUrl ?? env.ANTHROPIC_BASE_URL ?? ANTHROPIC_DEFAULT_BASE_URL,
      maxRetries: 0, // the retry policy and the deadlines are ours (live-call.ts)
      timeout: sdkTimeoutMs(options),
      // The SDK would print what it could not parse to stderr; the failure reaches us as an error.
      logLevel: 'off',
      // Sent without fetch's per-request copy of the body (MODEL-10).
      fetch: providerFetch,
    };
  }

  /** The SDK client, loaded on first use so offline runs never pay for loading the SDK. */
  private sdk(): Promise<Anthropic> {
    this.client ??= import('@anthropic-ai/sdk').then(({ default: Client }) => new Client(this.clientOptions));
    return this.client;
  }

  /** Asks for a Solution; retries transient failures; streams calls to `onCall`. */
  async generate(request: ModelRequest): Promise<ModelResponse> {
    throwIfAborted(request.signal);
    // Loaded before the first deadline starts: loading the SDK is not the server's delay.
    const sdk = await this.sdk();
    return callWithRetries('Anthropic', request, this.options, async (deadline, counted) => {
      for (;;) {
        const strict = request.plainText ? undefined : this.strictFor(request.schema);
        // The output object itself (MSG-32): its strict form is the solution tool's input, while the server takes strict tools.
        const output = this.strictRefused === undefined ? this.strictSchemas.ofOutput(request.outputSchema) : undefined;
        const sent = output ?? strict;
        const shape = output ? (request.outputSchema as JsonSchema) : request.schema;
        const decode = sent?.strict ? (value: unknown) => fromStrictValue(value, shape, sent.encodedNodes) : undefined;
        // A plain-text answer is the output itself (MSG-28), an output object too (MSG-32): neither holds calls to stream.
        const calls = request.plainText || output ? undefined : new StreamedCalls(counted, decode);
        const body = this.body(request, sent, output !== undefined);
        try {
          const answer = this.options.stream === false ? await this.whole(sdk, body, deadline) : await this.streamed(sdk, body, deadline, calls);
          return this.respond(answer, body, request, calls, decode, strict && schemaFormOf(strict), output !== undefined);
        } catch (error) {
          // A server (or model) without strict tools says so: the tool is sent without it from then on (MODEL-15).
          if (!strict?.strict || this.strictRefused !== undefined || !rejectsStrictTool(error)) throw error;
          this.strictRefused = `the server refused a strict tool: ${error instanceof Error ? error.message : String(error)}`;
        }
      }
    });
  }

  /** The form in which the schema of `request` goes out now (MODEL-17). */
  schemaFormOf(request: Pick<ModelRequest, 'schema' | 'plainText'>): SchemaForm | undefined {
    return request.plainText ? undefined : schemaFormOf(this.strictFor(request.schema));
  }

  /** The strict form of a schema (MODEL-15), built once per schema; not strict at all once the server refused strict tools. */
  private strictFor(schema: JsonSchema): StrictSchemaResult {
    if (this.strictRefused !== undefined) return { schema, strict: false, reason: this.strictRefused, encoded: [], encodedNodes: new Set() };
    return this.strictSchemas.of(schema);
  }

  private body(request: ModelRequest, strict: StrictSchemaResult | undefined, asOutput: boolean): MessageCreateParamsBase {
    // Empty and blank texts never reach a provider: the run drops them before asking, for every provider alike (MSG-31).
    const system: TextBlockParam[] = request.messages
      .filter((message) => message.role === 'system')
      .map((message) => ({ type: 'text', text: message.content }));
    const last = system.at(-1);
    if (last && this.options.promptCaching !== false) last.cache_control = { type: 'ephemeral' };
    const messages: MessageParam[] = request.messages.filter((message) => message.role !== 'system').map(anthropicMessage);
    // The API wants the conversation to open with a user turn.
    if (messages[0]?.role !== 'user')
      messages.unshift({ role: 'user', content: request.plainText ? EMPTY_PROMPT : 'Give your answer with the solution tool.' });
    const body: MessageCreateParamsBase = {
      model: this.options.model,
      max_tokens: typeof request.config.maxTokens === 'number' ? request.config.maxTokens : (this.options.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS),
      messages,
    };
    // A plain-text answer is the output itself (MSG-28): no solution tool to force.
    if (strict) {
      body.tools = [
        strict.strict
          ? {
              name: SOLUTION_TOOL,
              description: asOutput ? OUTPUT_TOOL_DESCRIPTION : SOLUTION_TOOL_DESCRIPTION,
              input_schema: strict.schema as { type: 'object' },
              strict: true,
            }
          : { name: SOLUTION_TOOL, description: SOLUTION_TOOL_DESCRIPTION, input_schema: request.schema as { type: 'object' } },
      ];
      body.tool_choice = { type: 'tool', name: SOLUTION_TOOL };
    }
    if (system.length > 0) body.system = system;
    return body;
  }

  private async whole(sdk: Anthropic, body: MessageCreateParamsBase, deadline: AttemptDeadline): Promise<RawAnswer> {
    const message = await sdk.messages.create(Object.assign({}, body, { stream: false as const }), { signal: deadline.signal });
    const tool = message.content.find((block) => block.type === 'tool_use' && block.name === SOLUTION_TOOL);
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return {
      toolJson: tool && tool.type === 'tool_use' ? JSON.stringify(tool.input) : undefined,
      text,
      usage: normalizeAnthropicUsage(message.usage),
      model: message.model,
      stopReason: message.stop_reason ?? undefined,
    };
  }

  private async streamed(sdk: Anthropic, body: MessageCreateParamsBase, deadline: AttemptDeadline, calls: StreamedCalls | undefined): Promise<RawAnswer> {
    const stream = await sdk.messages.create(Object.assign({}, body, { stream: true as const }), { signal: deadline.signal });
    const answer: RawAnswer = { text: '', usage: zeroUsage() };
    let toolIndex: number | undefined;
    let usage: Partial<AnthropicUsage> = {};
    for await (const event of stream) {
      deadline.chunk();
      switch (event.type) {
        case 'message_start':
          answer.model = event.message.model;
          usage = { ...event.message.usage };
          break;
        case 'content_block_start':
          if (toolIndex === undefined && event.content_block.type === 'tool_use' && event.content_block.name === SOLUTION_TOOL) {
            toolIndex = event.index;
            answer.toolJson = '';
          }
          break;
        case 'content_block_delta':
          if (event.index === toolIndex && event.delta.type === 'input_json_delta') {
            answer.toolJson = (answer.toolJson ?? '') + event.delta.partial_json;
            calls?.push(event.delta.partial_json);
          } else if (event.delta.type === 'text_delta') {
            answer.text += event.delta.text;
          }
          break;
        case 'message_delta':
          answer.stopReason = event.delta.stop_reason ?? answer.stopReason;
          // The final usage repeats or updates the start's figures; null means "unchanged".
          for (const [key, value] of Object.entries(event.usage ?? {})) {
            if (value !== null && value !== undefined) (usage as Record<string, unknown>)[key] = value;
          }
          break;
        default:
          break;
      }
    }
    // The SDK ends an aborted stream quietly; an aborted answer is no answer.
    deadline.check();
    answer.usage = normalizeAnthropicUsage(usage);
    return answer;
  }

  private respond(
    answer: RawAnswer,
    body: MessageCreateParamsBase,
    request: ModelRequest,
    calls: StreamedCalls | undefined,
    decode: ((value: unknown) => unknown) | undefined,
    schemaForm: SchemaForm | undefined,
    asOutput: boolean,
  ): ModelResponse {
    if (answer.toolJson === undefined && answer.stopReason === 'refusal') {
      throw new ModelError('model_error', `The Anthropic model ${this.options.model} refused to answer${answer.text ? `: ${answer.text}` : '.'}`);
    }
    if (answer.stopReason === 'max_tokens') {
      const origin =
        typeof request.config.maxTokens === 'number'
          ? 'config.maxTokens'
          : this.options.maxTokens !== undefined
            ? 'the maxTokens option'
            : 'the default of delegate-run';
      throw answerCut(this.id, body.max_tokens, origin, answer.toolJson ?? answer.text);
    }
    // An empty tool input streams no JSON at all: it is the empty object.
    const text = request.plainText || answer.toolJson === undefined ? answer.text : answer.toolJson.trim() === '' ? '{}' : answer.toolJson;
    const solution = solutionOfAnswer(text, request.plainText, decode, asOutput);
    calls?.finish(solution);
    return {
      text,
      solution,
      model: `anthropic:${answer.model || this.options.model}`,
      usage: answer.usage,
      costUsd: this.options.registry?.costOf(this.id, answer.usage) ?? null,
      ...(request.plainText ? { responseFormat: 'plain_text' } : {}),
      ...(schemaForm ? { schemaForm } : {}),
    };
  }
}

/** Whether an error is the server refusing a strict tool (MODEL-15): a 400 whose message names strict tools or structured outputs. */
export function rejectsStrictTool(error: unknown): boolean {
  if ((error as { status?: unknown } | null)?.status !== 400) return false;
  const message = error instanceof Error ? error.message : String(error);
  return /strict|structured output/i.test(message);
}

interface RawAnswer {
  /** The solution tool's input JSON, when the model called it. */
  toolJson?: string;
  /** Any plain text the model wrote. */
  text: string;
  usage: Usage;
  model?: string;
  stopReason?: string;
}

/**
 * Normalises Anthropic usage (its `input_tokens` already exclude cache reads and writes); the
 * thinking share of `output_tokens` (`output_tokens_details.thinking_tokens`) is `reasoningTokens`.
 */
export function normalizeAnthropicUsage(usage: Partial<AnthropicUsage> | null | undefined): Usage {
  if (!usage || !isJsonObject(usage)) return zeroUsage();
  const result: Usage = {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheReadTokens: usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
  };
  const thinking = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') result.reasoningTokens = thinking;
  return result;
}

/** An image as an `image` block, a PDF as a `document` block, both base64 (ATT-6). */
function anthropicBlock(file: ProviderFile): ContentBlockParam {
  const data = base64Of(file);
  if (file.mediaType.startsWith('image/'))
    return { type: 'image', source: { type: 'base64', media_type: file.mediaType as 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp', data } };
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } };
}

/** A non-system message on the wire: its text, and on a user message with files, blocks text first (ATT-6). */
function anthropicMessage(message: ProviderMessage): MessageParam {
  const role = message.role as 'user' | 'assistant';
  if (role !== 'user' || message.files === undefined || message.files.length === 0) return { role, content: message.content };
  return { role, content: [{ type: 'text', text: message.content }, ...message.files.map(anthropicBlock)] };
}
