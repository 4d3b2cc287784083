/** The plain turns `system`, `user` and `assistant` (MSG-3, MSG-11): `{type, text}`, also written with `message`, `content` or as `{role, content}`. */
import { defineHandler, type MessageHandler } from '../handlers.js';
import type { BaseMessage } from '../types.js';
import { messageSchema } from './message-schema.js';

/** A plain text turn (`system`, `user`, `assistant`), canonical form `{type, text}`. */
export interface TurnMessage extends BaseMessage {
  type: 'system' | 'user' | 'assistant';
  text: string;
}

const TURN_TYPES: ReadonlySet<string> = new Set<TurnMessage['type']>(['system', 'user', 'assistant']);

/** Gives a chat-style `{role, content}` message without `type` its type (MSG-2). */
export function withType(message: Record<string, unknown>): Record<string, unknown> {
  if (typeof message.type === 'string') return message;
  if (typeof message.role === 'string' && TURN_TYPES.has(message.role)) return { ...message, type: message.role };
  return message;
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
