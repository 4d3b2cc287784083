/** The built-in message handlers: turns, text, data/input/state, tools, plans, errors, meta. */
import { HandlerRegistry, type MessageHandler, type RenderState } from './handlers.js';
import { builtinNormalizers } from './normalize.js';
import type {
  DataMessage,
  ErrorMessage,
  InputMessage,
  StateMessage,
  JsonSchema,
  Message,
  MetaMessage,
  PlanMessage,
  TextMessage,
  TurnMessage,
} from './types.js';

const MESSAGE_SCHEMA = { $ref: 'https://delegate-run.dev/schemas/message.schema.json' };

function schemaRef(definition: string): JsonSchema {
  return { $ref: `${MESSAGE_SCHEMA.$ref}#/$defs/${definition}` };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Renders a merged data-like message as a readable block: heading, description, value, schema. */
export function renderDataBlock(kind: string, value: unknown, message: { description?: unknown; schema?: unknown; _instance?: unknown }): string {
  const instance = typeof message._instance === 'string' ? ` (instance "${message._instance}")` : '';
  const lines = [`## ${kind}${instance}`];
  if (typeof message.description === 'string') lines.push(message.description);
  lines.push('```json', json(value), '```');
  if (message.schema !== undefined) lines.push(`Schema of ${kind}:`, '```json', json(message.schema), '```');
  return lines.join('\n');
}

function pushUser(state: RenderState, content: string): void {
  state.messages.push({ role: 'user', content });
}

const turn = (type: 'system' | 'user' | 'assistant'): MessageHandler => ({
  type,
  schema: schemaRef('turn'),
  normalize: builtinNormalizers[type],
  render(message, state) {
    state.messages.push({ role: type, content: (message as TurnMessage).text });
  },
});

/** Every handler the runtime registers by default. */
export function builtinHandlers(): MessageHandler[] {
  return [
    turn('system'),
    turn('user'),
    turn('assistant'),
    {
      type: 'text',
      schema: schemaRef('text'),
      normalize: builtinNormalizers.text,
      render(message, state) {
        const text = message as TextMessage;
        state.messages.push({ role: text.role ?? 'user', content: text.text });
      },
    },
    {
      type: 'data',
      schema: schemaRef('data'),
      normalize: builtinNormalizers.data,
      render(message, state) {
        const data = message as DataMessage;
        pushUser(state, renderDataBlock(data.kind, data.data, data));
      },
    },
    {
      type: 'input',
      schema: schemaRef('input'),
      normalize: builtinNormalizers.input,
      render(message, state) {
        if (!('input' in message)) return;
        const instance = typeof message._instance === 'string' ? ` (instance "${message._instance}")` : '';
        const lines = [`## Input${instance}`];
        if (typeof message.description === 'string') lines.push(message.description);
        lines.push('These are the values this Request was given:', '```json', json(message.input), '```');
        if (message.schema !== undefined) {
          lines.push(
            'The input this Request expects follows this schema (map the given values onto it where they differ):',
            '```json',
            json(message.schema),
            '```',
          );
        }
        pushUser(state, lines.join('\n'));
      },
    },
    {
      type: 'state',
      schema: schemaRef('state'),
      normalize: builtinNormalizers.state,
      render(message, state) {
        pushUser(state, renderDataBlock('state', message.state, message as StateMessage));
      },
    },
    // Tools reach the model through the composed Solution schema, not as text.
    { type: 'tool', schema: schemaRef('tool'), normalize: builtinNormalizers.tool },
    {
      type: 'plan',
      schema: schemaRef('plan'),
      normalize: builtinNormalizers.plan,
      render(message, state) {
        const plan = message as PlanMessage;
        if (plan.mode === 'lazy') {
          state.instructions.push(
            'Plan only: answer with the calls that would complete the task, using †references between them for values that earlier calls produce. The calls will not be executed now; they are returned as a plan for review.',
          );
          if (plan.calls.length > 0) pushUser(state, `## Draft plan\n\`\`\`json\n${json(plan.calls)}\n\`\`\``);
        } else if (plan.calls.length > 0) {
          pushUser(state, `## Plan (already executed before this step)\n\`\`\`json\n${json(plan.calls)}\n\`\`\``);
        }
      },
    },
    {
      type: 'error',
      schema: schemaRef('error'),
      render(message, state) {
        const error = message as ErrorMessage;
        const id = typeof error.call.id === 'string' ? ` (${error.call.id})` : '';
        pushUser(
          state,
          `## Error in call ${String(error.call._tool ?? '?')}${id}\n${error.error.code}: ${error.error.message}\nThe call was:\n\`\`\`json\n${json(error.call)}\n\`\`\``,
        );
      },
    },
    {
      type: 'meta',
      schema: schemaRef('meta'),
      normalize: builtinNormalizers.meta,
      render(message, state) {
        const meta = (message as MetaMessage).meta;
        pushUser(state, `## Meta\n\`\`\`json\n${json(meta)}\n\`\`\``);
        state.solutionProperties.meta = { type: 'object', description: 'Identity and version of what this answer updates.' };
      },
    },
  ];
}

/** A registry holding the built-in handlers; register your own on it. */
export function defaultHandlers(): HandlerRegistry {
  return new HandlerRegistry(builtinHandlers());
}

/** True for the types whose messages are data (merged by identity before rendering). */
export function isDataLike(message: Message): message is DataMessage | InputMessage | StateMessage {
  return message.type === 'data' || message.type === 'input' || message.type === 'state';
}
