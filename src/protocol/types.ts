/** The protocol's document vocabulary as TypeScript types: Request, Message, Tool, Call, Solution. */

/** A JSON Schema, kept loose on purpose: documents carry arbitrary schemas and ajv is the judge. */
export type JsonSchema = { [keyword: string]: unknown } | boolean;

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Every context message has a `type`; the registered handler for that type gives it meaning. */
export interface BaseMessage {
  type: string;
  [field: string]: unknown;
}

/** A plain text turn (`system`, `user`, `assistant`), canonical form `{type, text}`. */
export interface TurnMessage extends BaseMessage {
  type: 'system' | 'user' | 'assistant';
  text: string;
}

/** Text with an optional role (`user` by default). */
export interface TextMessage extends BaseMessage {
  type: 'text';
  text: string;
  role?: 'system' | 'user' | 'assistant';
}

/** How a write combines with what is already at its path (spec/variables.md VAR-13). */
export type OutputMethod = 'set' | 'merge' | 'assign' | 'push' | 'concat';

/**
 * Structured context. `kind` plus `_instance` is its identity. Writes made by calls carry `_path`
 * (where below the kind the value goes), `_outputMethod`, `_call` and `_date`; messages written in
 * a document have none of these and merge deeply into their identity's view.
 */
export interface DataMessage extends BaseMessage {
  type: 'data';
  kind: string;
  data: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
  _path?: string;
  _outputMethod?: OutputMethod;
  _call?: string;
  _date?: string;
}

/** The Request's structured prompt; a data message of kind `input`. No `input` = a template slot. */
export interface InputMessage extends BaseMessage {
  type: 'input';
  input?: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** The workflow's scratchpad; a data message of kind `state`. */
export interface StateMessage extends BaseMessage {
  type: 'state';
  state: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** Makes tools available; a later definition of the same name wins. */
export interface ToolMessage extends BaseMessage {
  type: 'tool';
  tool: Record<string, ToolSchema>;
}

/** A graph of calls executed before the model is asked (`eager`), or asked of the model (`lazy`). */
export interface PlanMessage extends BaseMessage {
  type: 'plan';
  mode: 'eager' | 'lazy';
  calls: Call[];
}

/** A failed call, fed back to the model. */
export interface ErrorMessage extends BaseMessage {
  type: 'error';
  call: { id?: string; _tool?: string; [field: string]: unknown };
  error: { code: string; message: string };
}

/** Identity/version of what is being updated. */
export interface MetaMessage extends BaseMessage {
  type: 'meta';
  meta: Record<string, unknown>;
}

/** The messages the core knows; users may add more types through handlers. */
export type Message =
  | TurnMessage
  | TextMessage
  | DataMessage
  | InputMessage
  | StateMessage
  | ToolMessage
  | PlanMessage
  | ErrorMessage
  | MetaMessage
  | BaseMessage;

/**
 * A Tool in canonical form: a JSON Schema object whose `properties` hold parameters and
 * meta-properties (`_delegate`, `_activity`, `_scopes`, `_output`, ...). Shorthand top-level
 * meta-properties are moved into `properties` (as `const`) when documents load.
 */
export interface ToolSchema {
  type?: 'object';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [keyword: string]: unknown;
}

/** A call as the model (or a plan) writes it: `_tool`, parameters and call-level meta-properties. */
export interface Call {
  _tool: string;
  _output?: unknown;
  _outputPath?: string;
  _outputMethod?: OutputMethod;
  _instance?: string;
  _reasoningForCall?: string;
  _delegate?: string;
  _scopes?: string[];
  [parameter: string]: unknown;
}

/** What the model returns at every step. */
export interface Solution {
  calls: Call[];
  output: unknown;
  meta?: Record<string, unknown>;
}

/** A Request's identity and description. */
export interface RequestMeta {
  name?: string;
  version?: string;
  description?: string;
  [field: string]: unknown;
}

/** Provider-neutral configuration a Request may carry. */
export interface RequestConfig {
  model?: string;
  tier?: 'fast' | 'balanced' | 'deep';
  temperature?: number;
  maxSteps?: number;
  maxTokens?: number;
  resolve?: 'runtime' | 'upfront';
  /** Limits on the whole run tree (this run and its delegates). */
  budget?: { tokens?: number; costUsd?: number };
  [field: string]: unknown;
}

/** A Request document in canonical form. */
export interface RequestDocument {
  meta?: RequestMeta;
  config?: RequestConfig;
  context: Message[];
  schema: JsonSchema;
}

export type { Usage } from './usage.js';

/** True for plain JSON objects (not arrays, not null): the one such check of the project. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for property names reserved for the runtime (they start with `_`). */
export function isMetaProperty(name: string): boolean {
  return name.startsWith('_');
}
