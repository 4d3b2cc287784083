/** The message pipeline's contract and registry: one handler per message type gives the type its whole meaning. */
import type { ReadResult, RecordOutcome } from '../variables/data-records.js';
import type { ErrorJson, MessageProblem } from '../errors.js';
import type { ProviderMessage } from '../model.js';
import type { BaseMessage, Call, JsonSchema, Message, RequestConfig, ToolSchema } from '../types.js';

/** What became of a call (PLAN-10): what the run's ledger tells a handler that shows a plan's progress. */
export type CallStatus = { status: 'done' } | { status: 'failed'; error?: ErrorJson };

/**
 * A rule of the answer that the Solution schema cannot say (MSG-21): given an answer that matches
 * the schema, or the prefix of one cut after a call (LOOP-11, so a property written after the
 * calls may be absent yet), the problems that make it unusable, each a full sentence; none when
 * it keeps the rule. Problems are re-asked like schema problems (LOOP-8).
 */
export type AnswerCheck = (answer: Record<string, unknown>) => string[];

/** What handlers build together before each model call. */
export interface RenderState {
  /** Provider messages, in order. */
  messages: ProviderMessage[];
  /** Provider configuration (temperature, maxTokens, ...); handlers may change it. */
  config: RequestConfig;
  /**
   * The Solution schema's properties besides `calls` and `output` (e.g. `meta`, `advisors`);
   * handlers may add. They come before `calls` and `output`, in this object's order (MSG-21).
   */
  solutionProperties: Record<string, JsonSchema>;
  /** Which of `solutionProperties` an answer must have (MSG-21). */
  solutionRequired: string[];
  /** Definitions the added properties refer to as `#/$defs/<name>`, placed in the Solution schema's `$defs`. */
  solutionDefinitions: Record<string, JsonSchema>;
  /** Rules of the answer beyond its schema (MSG-21). */
  answerChecks: AnswerCheck[];
  /** Instructions appended to the system prompt by handlers (joined with blank lines). */
  instructions: string[];
  /** The whole context being rendered, for handlers whose meaning depends on other messages. */
  readonly context: readonly Message[];
  /** The model step being rendered: 0 for the run's first. */
  readonly step: number;
  /** The tools the answer may call, by name (tool messages and tools other messages offer, MSG-22). */
  readonly tools: ReadonlyMap<string, ToolSchema>;
  /** What became of a call so far, for plans shown with their progress (PLAN-11); absent outside a run. */
  callStatus?: (call: Call) => CallStatus | undefined;
  /** The instances of the context (DATA-1), over which a plan without `_instance` is a template (PLAN-12). */
  instances?: readonly string[];
}

/** A message of a document with the JSON pointer where it is. */
export interface PlacedMessage<M extends BaseMessage = BaseMessage> {
  message: M;
  /** Its pointer in the document, e.g. `/context/3`. */
  at: string;
}

/** Something wrong among several messages, at a JSON pointer of the document. */
export interface DocumentProblem {
  /** The pointer in the document (not relative to a message). */
  pointer: string;
  /** A full sentence saying what was expected. */
  message: string;
}

/** The fields a merged data-like message carries besides its value: the latest of its identity's messages. */
export interface ShownFields {
  schema?: JsonSchema;
  description?: string;
  _instance?: string;
}

/**
 * What a data-like message type means for the run's data (spec/data-and-instances.md): which kind
 * its messages belong to, the record each contributes, and the one merged message that shows a
 * kind's value to the model or to a scoped Activity.
 */
export interface DataSemantics<M extends BaseMessage = BaseMessage> {
  /** The kind every message of the type belongs to (`input`, `state`); absent when each message names its own. */
  readonly kind?: string;
  /** The kind one message belongs to; with its `_instance`, the message's identity (MSG-12). */
  kindOf(message: M): string;
  /** The record the message contributes (none for, say, a template slot), or the problem that makes its write unreadable. */
  record(message: M): RecordOutcome;
  /**
   * The message of this type that shows a kind's merged value (`view.found` false: nothing is given
   * yet), with the latest `schema` and `description`; undefined when there is nothing to show.
   */
  show(kind: string, view: ReadResult, fields: ShownFields): M | undefined;
}

/**
 * A handler gives one message type its meaning: its canonical shape, its shorthand, the checks its
 * schema cannot express, how it renders and, for data-like types, what it means for the data.
 * Replacing a built-in handler replaces all of that; spread the built-in one to change one part.
 */
export interface MessageHandler<M extends BaseMessage = BaseMessage> {
  /** The message `type` it handles. */
  readonly type: M['type'];
  /** JSON Schema of the canonical form; documents are validated against it on load. */
  readonly schema?: JsonSchema;
  /**
   * The `config` keys of a Request document the handler reads, besides those the runtime
   * understands (DOC-3): a document's other keys are refused on load.
   */
  readonly configKeys?: readonly string[];
  /** Turns accepted shorthand forms into the canonical form, which `schema` then judges. Must be idempotent. */
  normalize?(message: BaseMessage): BaseMessage;
  /** Problems of a message valid against `schema` that the schema cannot express; checked when a document loads. */
  check?(message: M): MessageProblem[];
  /**
   * Problems among all the messages of the type in one document, in context order, that no single
   * message shows (two advisors with one id); checked when a document loads, after `check`.
   */
  checkAll?(messages: readonly PlacedMessage<M>[]): DocumentProblem[];
  /**
   * Tools a message of the type makes available besides `tool` messages (MSG-22), given the tools
   * defined before it; as with `tool` messages, a later definition of a name wins.
   */
  tools?(message: M, defined: ReadonlyMap<string, ToolSchema>): Record<string, ToolSchema>;
  /**
   * Renders the message into the state. Data-like messages arrive already merged by identity
   * (one call per identity, with the merged value in the message's value field).
   */
  render?(message: M, state: RenderState): void;
  /** Present for data-like types: their messages are data, merged by identity before rendering. */
  readonly data?: DataSemantics<M>;
}

/**
 * Types a handler by its message type, so its hooks read their own fields without casts:
 * `defineHandler<TextMessage>({ type: 'text', render(message, state) { message.text } })`.
 */
export function defineHandler<M extends BaseMessage>(handler: MessageHandler<M>): MessageHandler<M> {
  return handler;
}

/** A registry of handlers keyed by message type. */
export class HandlerRegistry {
  private readonly handlers = new Map<string, MessageHandler>();
  private changes = 0;

  constructor(handlers: Iterable<MessageHandler> = []) {
    for (const handler of handlers) this.register(handler);
  }

  /** Adds or replaces the handler of `handler.type`. */
  register(handler: MessageHandler): this {
    this.handlers.set(handler.type, handler);
    this.changes += 1;
    return this;
  }

  /** Counts the registrations so far: a verdict reached with an earlier revision may no longer hold (DEL-29). */
  get revision(): number {
    return this.changes;
  }

  /** The handler of a type, if one is registered. */
  get(type: string): MessageHandler | undefined {
    return this.handlers.get(type);
  }

  /** True when a handler of the type is registered. */
  has(type: string): boolean {
    return this.handlers.has(type);
  }

  /** Registered type names, sorted, for error messages. */
  types(): string[] {
    return [...this.handlers.keys()].sort();
  }

  /** The registered handlers, by type name (sorted): the `list` every registry has. */
  list(): MessageHandler[] {
    return [...this.handlers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, handler]) => handler);
  }

  /** The data-like handler whose type always holds `kind` (the `state` handler for `state`), if any. */
  ownerOf(kind: string): MessageHandler | undefined {
    for (const handler of this.handlers.values()) if (handler.data?.kind === kind) return handler;
    return undefined;
  }
}
