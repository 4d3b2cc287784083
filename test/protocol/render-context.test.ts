/** Unit tests of src/protocol/messages/render-context.ts: the handler pipeline (MSG-9, MSG-10), data merged by identity at its first position (MSG-12, DATA-9). */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { recordOf } from '../../src/protocol/messages/data-messages.js';
import { renderDataBlock } from '../../src/protocol/messages/render-blocks.js';
import type { MessageHandler } from '../../src/protocol/messages/handlers.js';
import { mergedMessage as mergedWith, renderContext } from '../../src/protocol/messages/render-context.js';
import type { Message } from '../../src/protocol/types.js';
import type { DataRecord } from '../../src/protocol/variables/data-records.js';

const builtins = defaultHandlers();
const mergedMessage = (kind: string, instance: string | undefined, records: DataRecord[], members: Message[]) =>
  mergedWith({ kind, instance, records, members }, builtins);

const contents = (context: Message[]) => renderContext(context, defaultHandlers()).messages.map((message) => message.content);

describe('renderContext: order and layout (MSG-9, MSG-10)', () => {
  it('renders messages in context order through their handlers', () => {
    const rendered = renderContext(
      [
        { type: 'system', text: 'S' },
        { type: 'user', text: 'U' },
        { type: 'assistant', text: 'A' },
        { type: 'text', text: 'T', role: 'system' },
      ],
      defaultHandlers(),
    );
    expect(rendered.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A' },
      { role: 'system', content: 'T' },
    ]);
  });

  it('starts from a copy of the Request config and adds no Solution properties by default', () => {
    const config = { temperature: 0.2 };
    const rendered = renderContext([{ type: 'user', text: 'x' }], defaultHandlers(), config);
    expect(rendered.config).toEqual({ temperature: 0.2 });
    expect(rendered.config).not.toBe(config);
    expect(rendered.solutionProperties).toEqual({});
  });

  it('ends with one system message holding the handler instructions, joined by blank lines', () => {
    const note: MessageHandler = {
      type: 'note',
      render(message, state) {
        state.instructions.push(String(message.note));
      },
    };
    const rendered = renderContext(
      [
        { type: 'note', note: 'First rule.' },
        { type: 'user', text: 'Hi.' },
        { type: 'note', note: 'Second rule.' },
      ],
      defaultHandlers().register(note),
    );
    expect(rendered.messages).toEqual([
      { role: 'user', content: 'Hi.' },
      { role: 'system', content: 'First rule.\n\nSecond rule.' },
    ]);
  });

  it('adds the lazy plan instruction as the last system message (PLAN-7)', () => {
    const rendered = renderContext(
      [
        { type: 'plan', mode: 'lazy', calls: [] },
        { type: 'user', text: 'Plan a trip.' },
      ],
      defaultHandlers(),
    );
    expect(rendered.messages).toHaveLength(2);
    expect(rendered.messages[1]?.role).toBe('system');
    expect(rendered.messages[1]?.content).toMatch(/calls/);
  });

  it('adds no trailing system message when no handler gave instructions', () => {
    expect(renderContext([{ type: 'user', text: 'x' }], defaultHandlers()).messages).toHaveLength(1);
  });

  it('renders nothing for messages whose handler has no rendering function', () => {
    const rendered = renderContext(
      [
        { type: 'silent', value: 1 },
        { type: 'user', text: 'x' },
      ],
      defaultHandlers().register({ type: 'silent' }),
    );
    expect(rendered.messages).toEqual([{ role: 'user', content: 'x' }]);
  });

  it('gives a data-like message of a custom kind the data handler', () => {
    expect(contents([{ type: 'data', kind: 'custom', data: 1 }])).toEqual([renderDataBlock('custom', 1, {})]);
  });
});

describe('renderContext: data merged by identity (MSG-12, DATA-2)', () => {
  it('renders an identity once, merged deeply, at the position of its FIRST message', () => {
    const rendered = contents([
      { type: 'user', text: 'before' },
      { type: 'state', state: { a: 1, nested: { x: 1 } } },
      { type: 'user', text: 'between' },
      { type: 'state', state: { b: 2, nested: { y: 2 } } },
      { type: 'user', text: 'after' },
    ]);
    expect(rendered).toEqual(['before', renderDataBlock('state', { a: 1, nested: { x: 1, y: 2 }, b: 2 }, {}), 'between', 'after']);
  });

  it('includes writes made by calls in the merged value, still at the first position', () => {
    const rendered = contents([
      { type: 'state', state: { count: 1, items: ['a'] } },
      { type: 'user', text: 'between' },
      { type: 'data', kind: 'state', data: 5, _path: 'count', _outputMethod: 'set', _call: '0.0' },
      { type: 'data', kind: 'state', data: 'b', _path: 'items', _outputMethod: 'push', _call: '0.1' },
    ]);
    expect(rendered).toEqual([renderDataBlock('state', { count: 5, items: ['a', 'b'] }, {}), 'between']);
  });

  it('renders a kind first created by a write at the write position', () => {
    const rendered = contents([
      { type: 'user', text: 'first' },
      { type: 'data', kind: 'summary', data: 'Short.', _path: '', _outputMethod: 'set' },
    ]);
    expect(rendered).toEqual(['first', renderDataBlock('summary', 'Short.', {})]);
  });

  it('shows the latest description and the latest schema of the group', () => {
    const rendered = contents([
      { type: 'data', kind: 'hr', data: { a: 1 }, description: 'old', schema: { title: 'old' } },
      { type: 'data', kind: 'hr', data: { b: 2 }, description: 'new' },
      { type: 'data', kind: 'hr', data: { c: 3 }, schema: { title: 'new' } },
    ]);
    expect(rendered).toEqual([renderDataBlock('hr', { a: 1, b: 2, c: 3 }, { description: 'new', schema: { title: 'new' } })]);
  });

  it('keeps kinds apart: each kind is its own block at its own first position', () => {
    const rendered = contents([
      { type: 'data', kind: 'a', data: 1 },
      { type: 'data', kind: 'b', data: 2 },
      { type: 'data', kind: 'a', data: 3 },
    ]);
    expect(rendered).toEqual([renderDataBlock('a', 3, {}), renderDataBlock('b', 2, {})]);
  });
});

describe('renderContext: instances (DATA-3, DATA-9)', () => {
  it('renders each instance as its own block, headed with its name, holding only its own messages', () => {
    const rendered = contents([
      { type: 'state', state: { glossary: { workspace: 'workspace' } } },
      { type: 'state', _instance: 'fr', state: { language: 'French' } },
      { type: 'state', _instance: 'de', state: { language: 'German' } },
      { type: 'data', kind: 'state', data: 'Espace', _path: 'glossary.workspace', _instance: 'fr' },
    ]);
    expect(rendered).toEqual([
      renderDataBlock('state', { glossary: { workspace: 'workspace' } }, {}),
      renderDataBlock('state', { language: 'French', glossary: { workspace: 'Espace' } }, { _instance: 'fr' }),
      renderDataBlock('state', { language: 'German' }, { _instance: 'de' }),
    ]);
  });

  it('never shows instance data in the global block', () => {
    const [global] = contents([
      { type: 'state', state: { shared: true } },
      { type: 'state', _instance: 'fr', state: { secret: 'FR-ONLY' } },
    ]);
    expect(global).not.toContain('FR-ONLY');
  });
});

describe('renderContext: input (MSG-13, DATA-8)', () => {
  it('renders nothing for a template slot alone', () => {
    expect(
      contents([
        { type: 'input', schema: { type: 'object' } },
        { type: 'user', text: 'x' },
      ]),
    ).toEqual(['x']);
  });

  it('renders nothing for an instance template slot alone', () => {
    expect(contents([{ type: 'input', _instance: 'fr', schema: { type: 'object' } }])).toEqual([]);
  });

  it('renders given input at the slot position, with the slot schema as the expected shape', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const rendered = contents([
      { type: 'input', schema },
      { type: 'user', text: 'between' },
      { type: 'input', input: { town: 'Oslo' } },
    ]);
    expect(rendered).toHaveLength(2);
    expect(rendered[0]).toContain('## Input');
    expect(rendered[0]).toContain(JSON.stringify({ town: 'Oslo' }));
    expect(rendered[0]).toContain(JSON.stringify(schema));
    expect(rendered[1]).toBe('between');
  });

  it('merges given input over the document values (DATA-8)', () => {
    const [input] = contents([
      { type: 'input', input: { style: 'bullets', length: 3 } },
      { type: 'input', input: { style: 'prose' } },
    ]);
    expect(input).toContain(JSON.stringify({ style: 'prose', length: 3 }));
  });
});

describe('renderContext: custom handlers (MSG-1, MSG-9)', () => {
  it('lets a registered handler change the config, add Solution properties and render messages', () => {
    const mood: MessageHandler = {
      type: 'mood',
      render(message, state) {
        state.config.temperature = Number(message.temperature);
        state.solutionProperties.mood = { enum: ['happy', 'sad'] };
        state.messages.push({ role: 'system', content: `Mood: ${String(message.mood)}` });
      },
    };
    const rendered = renderContext(
      [
        { type: 'user', text: 'Hi.' },
        { type: 'mood', mood: 'calm', temperature: 0.7 },
      ],
      defaultHandlers().register(mood),
      { temperature: 0, maxTokens: 100 },
    );
    expect(rendered.config).toEqual({ temperature: 0.7, maxTokens: 100 });
    expect(rendered.solutionProperties).toEqual({ mood: { enum: ['happy', 'sad'] } });
    expect(rendered.messages).toEqual([
      { role: 'user', content: 'Hi.' },
      { role: 'system', content: 'Mood: calm' },
    ]);
  });

  it('uses a replaced built-in handler for its type', () => {
    const registry = defaultHandlers().register({
      type: 'user',
      render(message, state) {
        state.messages.push({ role: 'user', content: String(message.text).toUpperCase() });
      },
    });
    expect(renderContext([{ type: 'user', text: 'quiet' }], registry).messages).toEqual([{ role: 'user', content: 'QUIET' }]);
  });

  it('adds the meta Solution property when a meta message is rendered (MSG-17)', () => {
    expect(renderContext([{ type: 'meta', meta: { id: 'x' } }], defaultHandlers()).solutionProperties).toHaveProperty('meta');
  });
});

describe('mergedMessage', () => {
  const records = (messages: Message[]): DataRecord[] => messages.flatMap((message) => recordOf(message, builtins) ?? []);

  it('builds the canonical message of the kind: input, state or data', () => {
    const context: Message[] = [
      { type: 'input', input: { a: 1 } },
      { type: 'state', state: { b: 2 } },
      { type: 'data', kind: 'hr', data: [1] },
    ];
    const all = records(context);
    expect(mergedMessage('input', undefined, all, [context[0]!])).toEqual({ type: 'input', input: { a: 1 } });
    expect(mergedMessage('state', undefined, all, [context[1]!])).toEqual({ type: 'state', state: { b: 2 } });
    expect(mergedMessage('hr', undefined, all, [context[2]!])).toEqual({ type: 'data', kind: 'hr', data: [1] });
  });

  it('is undefined for a data kind with no value, and a slot for input', () => {
    expect(mergedMessage('hr', undefined, [], [])).toBeUndefined();
    expect(mergedMessage('input', 'fr', [], [{ type: 'input', schema: true, _instance: 'fr' }])).toEqual({ type: 'input', schema: true, _instance: 'fr' });
  });
});
