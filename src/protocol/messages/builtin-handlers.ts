/** The built-in message handlers, one file per type in messages/: turns, text, data/input/state, tools, plans, errors, meta, advisors, workers, toolsets. */
import { HandlerRegistry, type MessageHandler } from './handlers.js';
import { advisorHandler } from './advisor.js';
import { dataHandler } from './data.js';
import { errorHandler } from './error.js';
import { inputHandler } from './input.js';
import { metaHandler } from './meta.js';
import { planHandler } from './plan.js';
import { stateHandler } from './state.js';
import { textHandler } from './text.js';
import { toolHandler } from './tool.js';
import { toolsetHandler } from './toolset.js';
import { turnHandler } from './turn.js';
import { workersHandler } from './workers.js';

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
