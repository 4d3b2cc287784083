/** The plain turns `system`, `user` and `assistant` (MSG-3, MSG-11): `{type, text}`, also written with `message`, `content` or as `{role, content}`; a structured `content` is the message it holds (MSG-20). */
import { defineHandler, type MessageHandler } from './handlers.js';
import type { MessageProblem } from '../errors.js';
import { pointer } from '../json.js';
import { isJsonObject, type BaseMessage, type TurnMessage } from '../types.js';
import { messageSchema } from './message-schema.js';

const TURN_TYPES: ReadonlySet<string> = new Set<TurnMessage['type']>(['system', 'user', 'assistant']);

/** Gives a chat-style `{role, content}` message without `type` its type (MSG-2). */
export function withType(message: Record<string, unknown>): Record<string, unknown> {
  if (typeof message.type === 'string') return message;
  if (typeof message.role === 'string' && TURN_TYPES.has(message.role)) return { ...message, type: message.role };
  return message;
}

/** The fields a chat message whose content is a message may carry besides it. */
const WRAPPER_FIELDS: ReadonlySet<string> = new Set(['type', 'role', 'content']);

/** True for a turn (typed, or chat-style once {@link withType} typed it) whose `content` is an object and that gives no text otherwise. */
export function hasStructuredContent(message: Record<string, unknown>): boolean {
  return (
    typeof message.type === 'string' &&
    TURN_TYPES.has(message.type) &&
    isJsonObject(message.content) &&
    message.text === undefined &&
    message.message === undefined
  );
}

/** What a chat message whose content is a message stands for: that message, or why it cannot be read. */
export type ContentOutcome = { ok: true; message: Record<string, unknown> } | { ok: false; problems: MessageProblem[] };

/**
 * The message a turn's structured `content` holds (MSG-20), act 001's
 * `{"role": "user", "content": {"type": "input", "input": {…}}}`: the content, taken as a message
 * of its own type. The turn's role is the speaker: a `text` content without a role takes it; a
 * turn content must be of that type; any other type must be spoken by `user`, the role structured
 * context is rendered in (MSG-12). Pointers of problems are relative to the written turn.
 */
export function unwrapContent(turn: Record<string, unknown>): ContentOutcome {
  const content = turn.content as Record<string, unknown>;
  const speaker = String(turn.type);
  const problems: MessageProblem[] = [];
  for (const key of Object.keys(turn)) {
    if (!WRAPPER_FIELDS.has(key))
      problems.push({ pointer: pointer(key), message: `Unexpected property "${key}": a chat message whose content is a message has only role and content.` });
  }
  if (typeof content.type !== 'string') {
    problems.push({
      pointer: '/content',
      message: 'Expected the content to be text, or a message that names its type in "type" (such as {"type": "input", "input": {…}}).',
    });
    return { ok: false, problems };
  }
  const inner = content.type;
  const role = typeof content.role === 'string' ? content.role : undefined;
  if (inner === 'text' && role !== undefined && role !== speaker) {
    problems.push({ pointer: '/role', message: `Expected the role "${role}" of the text content, but the chat message's role is "${speaker}".` });
  } else if (TURN_TYPES.has(inner) && inner !== speaker) {
    problems.push({ pointer: '/role', message: `Expected the role "${inner}" of the turn the content holds, but the chat message's role is "${speaker}".` });
  } else if (inner !== 'text' && !TURN_TYPES.has(inner) && speaker !== 'user') {
    problems.push({
      pointer: '/role',
      message: `Expected the role "user" for a chat message whose content is a "${inner}" message: structured messages reach the model as user context, so the role "${speaker}" would be ignored.`,
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, message: inner === 'text' && role === undefined ? { ...content, role: speaker } : content };
}

/** The canonical form of a turn: its text from `text`, `message` or `content` (in that order), without `role`. */
export function normalizeTurn(message: BaseMessage): BaseMessage {
  const text = message.text ?? message.message ?? message.content;
  const { message: _message, content: _content, role: _role, ...rest } = message;
  return { ...rest, type: message.type, text };
}

/** The handler of one turn type: the text becomes a provider message of that role. */
export function turnHandler(type: TurnMessage['type']): MessageHandler<TurnMessage> {
  return defineHandler<TurnMessage>({
    type,
    schema: messageSchema('turn'),
    normalize: normalizeTurn,
    render(message, state) {
      state.messages.push({ role: type, content: message.text });
    },
  });
}
