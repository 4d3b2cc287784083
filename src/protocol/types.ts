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

/** How a write combines with what is already at its path (spec/variables.md VAR-13). */
export type OutputMethod = 'set' | 'merge' | 'assign' | 'push' | 'concat';

// The built-in message types: their handlers are in messages/, one file each (MSG-1).
/** An advisor: a persona whose structured opinion the model writes before it acts (act 017). */
export interface AdvisorMessage extends BaseMessage {
  type: 'advisor';
  /** Unique among the context's advisors (ADV-2). */
  id: string;
  /** The advisor's domain and perspective. */
  role: string;
  /** JSON Schema of its opinion, an object schema (ADV-3); default: a `thought` string. */
  schema?: Record<string, unknown>;
  /** When it speaks (ADV-4): `start`, `finish`, `request`, or on demand (`null` or absent). */
  on?: 'start' | 'finish' | 'request' | null;
  /** Context keys it focuses on: soft guidance, never a restriction (ADV-7). */
  scopes?: string[];
  /** One opinion per instance, each carrying `_instance` (ADV-4). */
  isInstanced?: boolean;
}

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
  /** The call that wrote this message, as written (act 008, PLAN-10); a string is the older form, the call's id. */
  _call?: Call | string;
  _date?: string;
}

/** A failed call, fed back to the model. */
export interface ErrorMessage extends BaseMessage {
  type: 'error';
  call: { id?: string; _tool?: string; [field: string]: unknown };
  /** The call as written, when a run wrote this message (PLAN-10). */
  _call?: Call;
  error: { code: string; message: string };
}

/** The Request's structured prompt; a data message of kind `input`. No `input` = a template slot. */
export interface InputMessage extends BaseMessage {
  type: 'input';
  input?: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** Identity/version of what is being updated. */
export interface MetaMessage extends BaseMessage {
  type: 'meta';
  meta: Record<string, unknown>;
  /** What a meta must look like (MSG-23); without it, the shape of `meta` (same keys, same types). */
  schema?: Record<string, unknown>;
}

/** A graph of calls: the run's strategy (`eager`), or a request for one (`lazy`). */
export interface PlanMessage extends BaseMessage {
  type: 'plan';
  mode: 'eager' | 'lazy';
  calls: Call[];
  /** A lazy plan only: run the answered plan once it passes its checks and is approved (PLAN-7). */
  execute?: boolean;
  /** What became of each call, one entry per call (per instance for a template), kept by the run (PLAN-11). */
  _status?: PlanStatusEntry[];
  /** The instance the plan's calls run on; without it the plan is a template over the instances (PLAN-12). */
  _instance?: string;
}

/** The workflow's scratchpad; a data message of kind `state`. No `state` (only a `schema`) = its intended shape, no value yet. */
export interface StateMessage extends BaseMessage {
  type: 'state';
  state?: unknown;
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/** Text with an optional role (`user` by default). */
export interface TextMessage extends BaseMessage {
  type: 'text';
  text: string;
  role?: 'system' | 'user' | 'assistant';
}

/** Makes tools available; a later definition of the same name wins. */
export interface ToolMessage extends BaseMessage {
  type: 'tool';
  tool: Record<string, ToolSchema>;
}

/** A plain text turn (`system`, `user`, `assistant`), canonical form `{type, text}`. */
export interface TurnMessage extends BaseMessage {
  type: 'system' | 'user' | 'assistant';
  text: string;
}

/** The statuses a plan message keeps for its calls (PLAN-11): one per call, or per instance for a template. */
export type PlanStatusEntry = 'done' | 'failed' | 'pending' | Record<string, 'done' | 'failed' | 'pending'>;

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
  | AdvisorMessage
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
  /** The speaking advisors' opinions, written first (ADV-5). */
  advisors?: Record<string, unknown>[];
  calls: Call[];
  output: unknown;
  /** The identity and version of what the answer produces (MSG-23). */
  meta?: Record<string, unknown>;
}

/** A Request's identity and description. */
export interface RequestMeta {
  name?: string;
  version?: string;
  description?: string;
  [field: string]: unknown;
}

/** One rule of `config.toolRules`. */
export interface ToolRule {
  /** A glob on tool names: `*` any run of characters, `?` one. */
  tool: string;
  /** `false`: the tool is not offered and cannot be called. */
  allowed?: boolean;
  /** Overrides the tool's `_approval`: `required` gates every call, `never` none. */
  approval?: 'required' | 'never';
}

/** Provider-neutral configuration a Request may carry. */
export interface RequestConfig {
  model?: string;
  tier?: 'fast' | 'balanced' | 'deep';
  temperature?: number;
  maxSteps?: number;
  maxTokens?: number;
  resolve?: 'runtime' | 'upfront';
  /** Names for delegates (DEL-21): name → relative path or URL, resolved against this document. */
  delegates?: Record<string, string>;
  /** Limits on the whole run tree (this run and its delegates). */
  budget?: { tokens?: number; costUsd?: number };
  /**
   * The built-in `delegate` tool (DEL-23): `false` never offers it to this run; `{recursive: true}`
   * lets the workers it starts be offered it too. Absent or `true`: offered when the model may delegate.
   */
  delegation?: boolean | { recursive?: boolean };
  /** Rules on the tools this run offers (TOOL-21): by glob on the name, first match wins. */
  toolRules?: ToolRule[];
  [field: string]: unknown;
}

/** A Request document in canonical form. */
export interface RequestDocument {
  meta?: RequestMeta;
  config?: RequestConfig;
  context: Message[];
  schema: JsonSchema;
}

/** True for plain JSON objects (not arrays, not null): the one such check of the project. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for property names reserved for the runtime (they start with `_`). */
export function isMetaProperty(name: string): boolean {
  return name.startsWith('_');
}
