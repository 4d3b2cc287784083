/** The message pipeline's registry: one handler per message type, registered by name. */
import type { ProviderMessage } from './model.js';
import type { JsonSchema, Message, RequestConfig } from './types.js';

/** What handlers build together before each model call. */
export interface RenderState {
  /** Provider messages, in order. */
  messages: ProviderMessage[];
  /** Provider configuration (temperature, maxTokens, ...); handlers may change it. */
  config: RequestConfig;
  /** The Solution schema's properties besides `calls` and `output` (e.g. `meta`); handlers may add. */
  solutionProperties: Record<string, JsonSchema>;
  /** Instructions appended to the system prompt by handlers (joined with blank lines). */
  instructions: string[];
}

/** A handler gives one message type its meaning. */
export interface MessageHandler {
  /** The message `type` it handles. */
  readonly type: string;
  /** JSON Schema of the canonical form; documents are validated against it on load. */
  readonly schema?: JsonSchema;
  /** Turns accepted shorthand forms into the canonical form. Must be idempotent. */
  normalize?(message: Record<string, unknown>): Message;
  /**
   * Renders the message into the state. Data-like messages arrive already merged by identity
   * (one call per identity, with the merged value in the message's value field).
   */
  render?(message: Message, state: RenderState): void;
}

/** A registry of handlers keyed by message type. */
export class HandlerRegistry {
  private readonly handlers = new Map<string, MessageHandler>();

  constructor(handlers: Iterable<MessageHandler> = []) {
    for (const handler of handlers) this.register(handler);
  }

  /** Adds or replaces the handler of `handler.type`. */
  register(handler: MessageHandler): this {
    this.handlers.set(handler.type, handler);
    return this;
  }

  get(type: string): MessageHandler | undefined {
    return this.handlers.get(type);
  }

  has(type: string): boolean {
    return this.handlers.has(type);
  }

  /** Registered type names, sorted, for error messages. */
  types(): string[] {
    return [...this.handlers.keys()].sort();
  }

  /** The registered handlers, by type name (sorted): the `list` every registry has. */
  list(): MessageHandler[] {
    return this.types().map((type) => this.handlers.get(type) as MessageHandler);
  }
}
