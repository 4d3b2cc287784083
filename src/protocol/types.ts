/** The protocol's document vocabulary as TypeScript types: Request, Message, Tool, Call, Solution. */
import type { ToolRule } from './tool-rules.js';
import type { AdvisorMessage } from './messages/advisor.js';
import type { DataMessage } from './messages/data.js';
import type { ErrorMessage } from './messages/error.js';
import type { InputMessage } from './messages/input.js';
import type { MetaMessage } from './messages/meta.js';
import type { PlanMessage } from './messages/plan.js';
import type { StateMessage } from './messages/state.js';
import type { TextMessage } from './messages/text.js';
import type { ToolMessage } from './messages/tool.js';
import type { TurnMessage } from './messages/turn.js';

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

// The built-in message types are declared each beside its handler, in messages/.
export type { AdvisorMessage } from './messages/advisor.js';
export type { DataMessage } from './messages/data.js';
export type { ErrorMessage } from './messages/error.js';
export type { InputMessage } from './messages/input.js';
export type { MetaMessage } from './messages/meta.js';
export type { PlanMessage } from './messages/plan.js';
export type { StateMessage } from './messages/state.js';
export type { TextMessage } from './messages/text.js';
export type { ToolMessage } from './messages/tool.js';
export type { TurnMessage } from './messages/turn.js';

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

export type { Usage } from './usage.js';

/** True for plain JSON objects (not arrays, not null): the one such check of the project. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for property names reserved for the runtime (they start with `_`). */
export function isMetaProperty(name: string): boolean {
  return name.startsWith('_');
}
