/** Test helpers for the built-in message handlers: one message normalised or rendered the way the pipeline does it. */
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import type { RenderState } from '../../src/protocol/messages/handlers.js';
import { emptyRenderState } from '../../src/protocol/messages/render-context.js';
import { withType } from '../../src/protocol/messages/turn.js';
import type { Message } from '../../src/protocol/types.js';

/** A registry of the built-in handlers. */
export const builtins = defaultHandlers();

/** An empty render state with one configuration value, so changes to it show; `context` is what it renders (none by default). */
export function freshState(context: Message[] = []): RenderState {
  return emptyRenderState(context, { temperature: 0 }, 0, new Map());
}

/** Renders one (canonical, already merged) message with its built-in handler. */
export function render(message: Message): RenderState {
  const state = freshState();
  builtins.get(message.type)?.render?.(message, state);
  return state;
}

/** Normalises one message as written (chat form included) with its built-in handler. */
export function normalize(message: Record<string, unknown>): Record<string, unknown> {
  const typed = withType(message);
  const type = String(typed.type);
  const normalizer = builtins.get(type)?.normalize;
  if (!normalizer) throw new Error(`no normalizer for ${type}`);
  return normalizer({ ...typed, type });
}
