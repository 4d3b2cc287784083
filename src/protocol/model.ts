/** The provider-neutral Model contract the core speaks: rendered messages and a Solution schema in, a Solution and usage out. Providers implement it in src/models. */
import type { Call, JsonSchema, RequestConfig } from './types.js';
import type { Usage } from './usage.js';

/** A message as sent to a provider: plain text with a role, and on a user message the files sent as native parts (ATT-6). */
export interface ProviderMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /**
   * Images and PDFs sent after the text as the provider's own parts (ATT-6); only on `user`
   * messages. Never recorded in cassettes nor traced: `content` already names each by its
   * `{path, mediaType, bytes}` (ATT-7, ATT-8).
   */
  files?: ProviderFile[];
}

/** A file a provider receives as a native image or document part (ATT-6). */
export interface ProviderFile {
  /** The attachment's path as the caller named it (a PDF's file name at OpenAI). */
  path: string;
  /** `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `application/pdf`. */
  mediaType: string;
  data: Uint8Array;
}

/** True for the media types a provider receives as native parts (ATT-6): images and PDFs. */
export function isNativePartType(mediaType: string): boolean {
  return mediaType === 'application/pdf' || ['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(mediaType);
}

/** The base64 text of a file's bytes, as both providers' parts carry them (ATT-6). */
export function base64Of(file: ProviderFile): string {
  return Buffer.from(file.data).toString('base64');
}

/** One model call. */
export interface ModelRequest {
  /** The run's request name (`meta.name`, file name, or `anonymous:<tool>`); replay matches on it. */
  requestName: string;
  /** 0-based loop step within the run; a re-ask keeps its step. */
  step: number;
  /** Exactly what the model is sent. */
  messages: ProviderMessage[];
  /** The composed Solution schema the answer must match. */
  schema: JsonSchema;
  /** Provider configuration gathered by the message handlers (temperature, maxTokens, ...). */
  config: RequestConfig;
  /** Cancels in-flight work. */
  signal?: AbortSignal;
  /**
   * Streaming hook: a provider that streams calls this as soon as the call at `index` of the
   * Solution's `calls` array is complete, before the answer ends. Optional for providers.
   */
  onCall?: (call: Call, index: number) => void;
  /**
   * Rules of the answer beyond `schema` (MSG-21): the problems of an answer, or of an answer's
   * prefix cut after a call. A provider starts a call early, and delivers the final answer's calls,
   * only when the answer so far has none (LOOP-11).
   */
  check?: (answer: Record<string, unknown>) => string[];
  /** Told before a provider waits to retry a transient failure (traced as `model.retry`). */
  onRetry?: (retry: ModelRetry) => void;
  /**
   * True when the answer is nothing but the output as free text (MSG-28): `schema` is then
   * `{output: {"type": "string"}}` alone, and a provider may ask for plain text, with no response
   * format, and answer `{output: <the text>}`. A model that ignores it answers the schema as usual.
   */
  plainText?: boolean;
  /**
   * Set when the answer may be nothing but the output, an object (MSG-32): the Request's output
   * schema, which a provider may then send as the answer's shape instead of `schema`, answering
   * `{output: <the parsed answer>}`. A model that ignores it answers the Solution schema as usual.
   */
  outputSchema?: JsonSchema;
}

/** A retry a provider is about to make (spec/trace.md `model.retry`). */
export interface ModelRetry {
  /** The attempt that failed: 1 for the first attempt, so the first retry follows attempt 1. */
  attempt: number;
  /** Why it failed, in the provider's words or ours (a timeout). */
  reason: string;
  /** How long the provider waits before the next attempt, in milliseconds. */
  waitMs: number;
}

/** One model answer. */
export interface ModelResponse {
  /** The raw text the model produced (kept for re-asks and recording). */
  text: string;
  /** The parsed answer, when `text` was JSON; validation is the core's job. */
  solution?: unknown;
  /** The concrete model that answered, e.g. `openai:gpt-4.1-mini`. */
  model: string;
  usage: Usage;
  /** Cost of this call in US dollars, or `null` when the price is unknown. */
  costUsd: number | null;
  /** For a replayed answer whose cassette entry names a model: that model, whose price `costUsd` is (CAS-14). */
  replayOf?: string;
  /** How the answer's shape was asked for, when the provider has several ways (OpenAI: MODEL-5). */
  responseFormat?: string;
  /** How strictly the Solution schema was enforced by the provider, and why not more (MODEL-17). */
  schemaForm?: SchemaForm;
}

/**
 * How strictly a provider was asked for the Solution's shape (spec/models.md MODEL-17): `strict`
 * (the provider enforces the schema, `encoded` parts aside), `non_strict` (the schema is sent but
 * only guides the model), `json_object` (JSON is enforced, the schema is in the prompt) or
 * `prompt_only` (the schema is in the prompt alone). The core validates every answer either way.
 */
export interface SchemaForm {
  form: 'strict' | 'non_strict' | 'json_object' | 'prompt_only';
  /** Why the form is weaker than strict. */
  reason?: string;
  /** The JSON pointer of the Solution schema's part that forced it, when one part did. */
  pointer?: string;
  /** In a strict form: the pointers of the parts sent as JSON-encoded strings (MODEL-14). */
  encoded?: string[];
}

/** A model: one method, so test doubles and providers are interchangeable. */
export interface Model {
  /** The spec it was made from, e.g. `replay:examples.cassette.json` or `openai:gpt-4.1-mini`. */
  readonly id: string;
  /**
   * In a replayed run, the live model this one plays the part of (`openai:gpt-5`), when known:
   * gating the built-in `delegate` tool and choosing models by tier use it as the live run would
   * use its own model (CAS-15, DEL-23). Absent for live models, whose `id` is the model itself.
   */
  readonly standsFor?: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
  /**
   * The form in which `generate` would send this request's schema now (MODEL-17), for the trace's
   * `model.request`; absent for models with one way only (replay) and for plain-text requests.
   */
  schemaFormOf?(request: Pick<ModelRequest, 'schema' | 'plainText'>): SchemaForm | undefined;
}

/** Builds a model from the part of a spec after its prefix (`gpt-4.1-mini` in `openai:gpt-4.1-mini`). */
export type ModelFactory = (name: string, options: ModelFactoryOptions) => Model;

/** What a factory may need besides the name. */
export interface ModelFactoryOptions {
  /** Folder relative paths (cassettes) resolve against. */
  cwd: string;
  baseUrl?: string;
  env: Record<string, string | undefined>;
  /** Where a live run records a cassette (`--record`). */
  record?: string;
  /** Whole-answer timeout per attempt of live models, ms (`--model-timeout`; else DELEGATE_MODEL_TIMEOUT in `env`; else 120 s). */
  timeoutMs?: number;
  /** Longest silence between streamed chunks of live models, ms (default 30 s). */
  idleTimeoutMs?: number;
  /** Retries of transient failures of live models (`--model-retries`; default 3). */
  maxRetries?: number;
}

/** The model a run is said to use in delegation events: the live model it stands for when replayed (CAS-15), else its own id; `null` for none. */
export function liveModelName(model: Model | undefined): string | null {
  return model === undefined ? null : (model.standsFor ?? model.id);
}
