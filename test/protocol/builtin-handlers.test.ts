/** Unit tests of src/protocol/builtin-handlers.ts: each built-in handler's rendering (MSG-11 to MSG-17) and the registry it fills (MSG-1). */
import { describe, expect, it } from 'vitest';
import { builtinHandlers, defaultHandlers } from '../../src/protocol/builtin-handlers.js';
import { isDataMessage } from '../../src/protocol/data-messages.js';
import { renderDataBlock } from '../../src/protocol/messages/render-blocks.js';
import type { MessageHandler, RenderState } from '../../src/protocol/handlers.js';
import type { Message } from '../../src/protocol/types.js';

const handlers = defaultHandlers();

function freshState(): RenderState {
  return { messages: [], config: { temperature: 0 }, solutionProperties: {}, instructions: [] };
}

/** Renders one (canonical, already merged) message with its built-in handler. */
function render(message: Message): RenderState {
  const state = freshState();
  const handler = handlers.get(message.type) as MessageHandler;
  handler.render?.(message, state);
  return state;
}

describe('the built-in registry (MSG-1)', () => {
  it('has exactly one handler for each built-in type', () => {
    expect(handlers.types()).toEqual(['assistant', 'data', 'error', 'input', 'meta', 'plan', 'state', 'system', 'text', 'tool', 'user']);
    expect(builtinHandlers()).toHaveLength(11);
  });

  it('gives every built-in handler a schema, so documents are validated against it', () => {
    for (const handler of builtinHandlers()) expect(handler.schema, handler.type).toBeDefined();
  });

  it('lets a registration replace the handler of a type', () => {
    const registry = defaultHandlers();
    const replacement: MessageHandler = { type: 'user' };
    registry.register(replacement);
    expect(registry.get('user')).toBe(replacement);
    expect(registry.types()).toHaveLength(11);
  });

  it('treats data, input and state as data-like, and nothing else', () => {
    const dataLike = ['data', 'input', 'state'];
    for (const type of handlers.types()) expect(isDataMessage({ type }, handlers), type).toBe(dataLike.includes(type));
  });
});

describe('turns and text (MSG-11, MSG-4)', () => {
  it.each(['system', 'user', 'assistant'] as const)('renders a %s turn as one message of that role with its text unchanged', (type) => {
    const text = '  Keep *this* exactly.\n';
    expect(render({ type, text }).messages).toEqual([{ role: type, content: text }]);
  });

  it('renders text with its role, and with role user when none is given', () => {
    expect(render({ type: 'text', text: 'Rules.', role: 'system' }).messages).toEqual([{ role: 'system', content: 'Rules.' }]);
    expect(render({ type: 'text', text: 'Note.' }).messages).toEqual([{ role: 'user', content: 'Note.' }]);
  });
});

describe('data and state (MSG-12)', () => {
  it('renders a data block: heading with the kind, description, the value as JSON, then the schema', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const [message] = render({ type: 'data', kind: 'hr', data: { name: 'Ada' }, description: 'The staff list.', schema }).messages;
    expect(message?.role).toBe('user');
    const content = message?.content ?? '';
    expect(content.split('\n')[0]).toBe('## hr');
    const order = ['The staff list.', JSON.stringify({ name: 'Ada' }, null, 2), 'Schema of hr:', JSON.stringify(schema, null, 2)].map((part) =>
      content.indexOf(part),
    );
    expect(order.every((position) => position > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('leaves out the description and schema when there are none', () => {
    const content = render({ type: 'data', kind: 'hr', data: [1] }).messages[0]?.content;
    expect(content).toBe('## hr\n```json\n[\n  1\n]\n```');
  });

  it('names the instance in the heading of an instance block', () => {
    expect(render({ type: 'state', state: { language: 'French' }, _instance: 'fr' }).messages[0]?.content.split('\n')[0]).toBe('## state (instance "fr")');
  });

  it('renders state under the kind state', () => {
    expect(render({ type: 'state', state: { count: 1 } }).messages).toEqual([{ role: 'user', content: renderDataBlock('state', { count: 1 }, {}) }]);
  });

  it('renders null as a value (null exists, VAR-5)', () => {
    expect(render({ type: 'data', kind: 'x', data: null }).messages[0]?.content).toContain('```json\nnull\n```');
  });
});

describe('input (MSG-13)', () => {
  it('renders the given values and, when a schema is known, the shape the Request expects', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const content = render({ type: 'input', input: { town: 'Oslo' }, schema, description: 'Where.' }).messages[0]?.content ?? '';
    expect(content.split('\n')[0]).toBe('## Input');
    expect(content).toContain('Where.');
    expect(content).toContain(JSON.stringify({ town: 'Oslo' }, null, 2));
    expect(content).toContain(JSON.stringify(schema, null, 2));
    expect(content.indexOf(JSON.stringify({ town: 'Oslo' }, null, 2))).toBeLessThan(content.indexOf(JSON.stringify(schema, null, 2)));
  });

  it('renders values without a schema section when no schema is known', () => {
    const content = render({ type: 'input', input: 'plain' }).messages[0]?.content ?? '';
    expect(content).toContain('"plain"');
    expect(content).not.toMatch(/schema/i);
  });

  it('renders nothing for a template slot (no input values)', () => {
    expect(render({ type: 'input', schema: { type: 'object' } }).messages).toEqual([]);
  });

  it('names the instance of an instance input', () => {
    expect(render({ type: 'input', input: 1, _instance: 'de' }).messages[0]?.content.split('\n')[0]).toBe('## Input (instance "de")');
  });
});

describe('tools (MSG-14)', () => {
  it('renders no text: tools reach the model through the Solution schema only', () => {
    const state = render({ type: 'tool', tool: { t: { type: 'object', description: 'SECRET-DESCRIPTION' } } });
    expect(state).toEqual(freshState());
  });
});

describe('plans (MSG-15)', () => {
  const calls = [{ _tool: 'greet', name: '†input.name', _outputPath: '†state.greeting' }];

  it('renders an eager plan with calls as a block of its calls marked as already executed', () => {
    const state = render({ type: 'plan', mode: 'eager', calls });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.role).toBe('user');
    expect(state.messages[0]?.content).toMatch(/already executed/);
    expect(state.messages[0]?.content).toContain(JSON.stringify(calls, null, 2));
    expect(state.instructions).toEqual([]);
  });

  it('renders nothing for an eager plan without calls', () => {
    expect(render({ type: 'plan', mode: 'eager', calls: [] })).toEqual(freshState());
  });

  it('adds an instruction to answer with calls only for a lazy plan, and lists its draft calls', () => {
    const state = render({ type: 'plan', mode: 'lazy', calls });
    expect(state.instructions).toHaveLength(1);
    expect(state.instructions[0]).toMatch(/calls/);
    expect(state.instructions[0]).toMatch(/not be executed/);
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.content).toContain(JSON.stringify(calls, null, 2));
    expect(state.messages[0]?.content).not.toMatch(/already executed/);
  });

  it('adds the instruction but no draft block for a lazy plan without calls', () => {
    const state = render({ type: 'plan', mode: 'lazy', calls: [] });
    expect(state.instructions).toHaveLength(1);
    expect(state.messages).toEqual([]);
  });
});

describe('errors (MSG-16)', () => {
  it('renders the tool, the call id, the code, the message and the call as JSON', () => {
    const call = { id: '0.1', _tool: 'get_weather', city: 'Oslo' };
    const content = render({ type: 'error', call, error: { code: 'invalid_params', message: 'The city is unknown.' } }).messages[0]?.content ?? '';
    expect(content).toContain('get_weather');
    expect(content).toContain('(0.1)');
    expect(content).toContain('invalid_params: The city is unknown.');
    expect(content).toContain(JSON.stringify(call, null, 2));
  });

  it('renders an error whose call has no id or tool (for example a document-written one)', () => {
    const content = render({ type: 'error', call: {}, error: { code: 'x', message: 'y' } }).messages[0]?.content ?? '';
    expect(content).toContain('x: y');
    expect(content).not.toContain('undefined');
  });
});

describe('meta (MSG-17)', () => {
  it('renders its value as JSON and adds an optional object property meta to the Solution schema', () => {
    const state = render({ type: 'meta', meta: { id: 'doc-7', version: '3' } });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.content).toContain(JSON.stringify({ id: 'doc-7', version: '3' }, null, 2));
    expect(state.solutionProperties.meta).toMatchObject({ type: 'object' });
  });

  it('is the only built-in message that adds a Solution property or changes the configuration', () => {
    const messages: Message[] = [
      { type: 'user', text: 'x' },
      { type: 'text', text: 'x' },
      { type: 'data', kind: 'k', data: 1 },
      { type: 'input', input: 1 },
      { type: 'state', state: 1 },
      { type: 'tool', tool: {} },
      { type: 'plan', mode: 'lazy', calls: [] },
      { type: 'error', call: {}, error: { code: 'c', message: 'm' } },
    ];
    for (const message of messages) {
      const state = render(message);
      expect(state.solutionProperties, message.type).toEqual({});
      expect(state.config, message.type).toEqual({ temperature: 0 });
    }
  });
});
