/** The built-in message handlers, one file per type in messages/: turns, text, data/input/state, tools, plans, errors, meta, advisors, workers, toolsets. */
import { HandlerRegistry, type MessageHandler } from './handlers.js';
import { advisorHandler } from './messages/advisor.js';
import { dataHandler } from './messages/data.js';
import { errorHandler } from './messages/error.js';
import { inputHandler } from './messages/input.js';
import { metaHandler } from './messages/meta.js';
import { planHandler } from './messages/plan.js';
import { stateHandler } from './messages/state.js';
import { textHandler } from './messages/text.js';
import { toolHandler } from './messages/tool.js';
import { toolsetHandler } from './messages/toolset.js';
import { turnHandler } from './messages/turn.js';
import { workersHandler } from './messages/workers.js';

/** Every handler the runtime registers by default, each a fresh object a caller may change. */
export function builtinHandlers(): MessageHandler[] {
  const handlers: MessageHandler[] = [
    turnHandler('system'),
    turnHandler('user'),
    turnHandler('assistant'),
    textHandler,
    dataHandler,
    inputHandler,
    stateHandler,
    toolHandler,
    planHandler,
    errorHandler,
    metaHandler,
    advisorHandler,
    workersHandler,
    toolsetHandler,
  ];
  return handlers.map((handler) => ({ ...handler }));
}

/** A registry holding the built-in handlers; register your own on it. */
export function defaultHandlers(): HandlerRegistry {
  return new HandlerRegistry(builtinHandlers());
}
