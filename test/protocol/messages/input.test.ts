/** Unit tests of src/protocol/messages/input.ts: template slots, rendering, the data semantics of input and the declared input schema. */
import { describe, expect, it } from 'vitest';
import { declaredInputSchema, givenInput, inputHandler } from '../../../src/protocol/messages/input.js';
import type { Message, RequestDocument } from '../../../src/protocol/types.js';
import { freshState, normalize, render } from '../../helpers/builtin-messages.js';

describe('input template slots (MSG-6, DOC-6)', () => {
  it('leaves an input with nothing to fold without an input field: a template slot', () => {
    const slot = normalize({ type: 'input', schema: { type: 'object' }, description: 'What to greet.' });
    expect(slot).toEqual({ type: 'input', schema: { type: 'object' }, description: 'What to greet.' });
    expect('input' in slot).toBe(false);
  });
});

describe('input: rendering (MSG-13)', () => {
  it('renders the given values and, when they do not match the schema, the shape the Request expects', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const content = render({ type: 'input', input: { town: 'Oslo' }, schema, description: 'Where.' }).messages[0]?.content ?? '';
    expect(content.split('\n')[0]).toBe('## Input');
    expect(content).toContain('Where.');
    expect(content).toContain(JSON.stringify({ town: 'Oslo' }));
    expect(content).toContain(JSON.stringify(schema));
    expect(content.indexOf(JSON.stringify({ town: 'Oslo' }))).toBeLessThan(content.indexOf(JSON.stringify(schema)));
  });

  it('renders values that match a schema saying nothing but their shape without the schema, compact (MSG-25, MSG-24)', () => {
    const schema = { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] };
    const content = render({ type: 'input', input: { task: 'Sum it up.' }, schema }).messages[0]?.content ?? '';
    expect(content).toBe('{"task":"Sum it up."}');
  });

  it('renders a lone input as its values alone, and with its heading beside any other block (MSG-33)', () => {
    const input = { type: 'input' as const, input: { task: 'Sum it up.' } };
    const system = { type: 'system' as const, text: 'Summarize.' };
    const tool = { type: 'tool' as const, tool: { look: { type: 'object', properties: {} } } };
    const lone = freshState([system, tool, { type: 'input', schema: { type: 'object' } }, input]);
    inputHandler.render?.(input, lone);
    expect(lone.messages.map((message) => message.content)).toEqual(['{"task":"Sum it up."}']);
    for (const beside of [
      { type: 'data', kind: 'notes', data: 1 },
      { type: 'user', text: 'Also this.' },
      { ...input, _instance: 'fr' },
    ] as Message[]) {
      const state = freshState([system, input, beside]);
      inputHandler.render?.(input, state);
      expect(state.messages[0]?.content).toBe('## Input\n{"task":"Sum it up."}');
    }
    // A description is said under the heading, lone or not.
    const described = { ...input, description: 'What to do.' };
    const state = freshState([described]);
    inputHandler.render?.(described, state);
    expect(state.messages[0]?.content).toBe('## Input\nWhat to do.\n{"task":"Sum it up."}');
  });

  it('keeps the schema beside matching values when it says what they mean (MSG-25)', () => {
    for (const schema of [
      { type: 'object', properties: { task: { type: 'string', description: 'What to do, in one sentence.' } } },
      { type: 'object', title: 'A task', properties: { task: { type: 'string' } } },
      { type: 'object', properties: { task: { type: 'string', examples: ['Sum it up.'] } } },
    ]) {
      const content = render({ type: 'input', input: { task: 'Sum it up.' }, schema }).messages[0]?.content ?? '';
      expect(content).toContain(JSON.stringify(schema));
    }
  });

  it("keeps the schema beside valid values whose property names differ from the ones it names: the mapping is the model's (MSG-25, act 014)", () => {
    const schema = { type: 'object', properties: { recipientId: { type: 'string' }, messageBody: { type: 'string' } } };
    for (const input of [{ userId: 'u_123', text: 'Hello, world!' }, { recipientId: 'u_123' }, { recipientId: 'u_123', messageBody: 'Hi', urgent: true }]) {
      const content = render({ type: 'input', input, schema }).messages[0]?.content ?? '';
      expect(content).toContain(JSON.stringify(input));
      expect(content).toContain(JSON.stringify(schema));
    }
  });

  it('compares the names at every level the values reach, and keeps a schema of alternatives (MSG-25)', () => {
    const nested = { type: 'object', properties: { to: { type: 'object', properties: { id: { type: 'string' } } } } };
    expect(render({ type: 'input', input: { to: { user: 'u' } }, schema: nested }).messages[0]?.content).toContain(JSON.stringify(nested));
    expect(render({ type: 'input', input: { to: { id: 'u' } }, schema: nested }).messages[0]?.content).toBe('{"to":{"id":"u"}}');
    const list = { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } };
    expect(render({ type: 'input', input: [{ id: 'a' }, { key: 'b' }], schema: list }).messages[0]?.content).toContain(JSON.stringify(list));
    const alternatives = { anyOf: [{ type: 'object', properties: { id: { type: 'string' } } }, { type: 'string' }] };
    expect(render({ type: 'input', input: { id: 'a' }, schema: alternatives }).messages[0]?.content).toContain(JSON.stringify(alternatives));
  });

  it('takes a property named like an annotation for no annotation (MSG-25)', () => {
    const schema = { type: 'object', properties: { description: { type: 'string' }, title: { type: 'string' } } };
    const content = render({ type: 'input', input: { description: 'd', title: 't' }, schema }).messages[0]?.content ?? '';
    expect(content).not.toContain('"properties"');
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

describe('declaredInputSchema (DOC-6)', () => {
  const schema = (name: string) => ({ type: 'object', properties: { [name]: { type: 'string' } } });

  it('is the schema of the first input template slot', () => {
    const document: RequestDocument = {
      context: [
        { type: 'input', input: { given: 1 }, schema: schema('given') },
        { type: 'input', description: 'a slot without a schema' },
        { type: 'input', schema: schema('first') },
        { type: 'input', schema: schema('second') },
      ],
      schema: true,
    };
    expect(declaredInputSchema(document)).toEqual(schema('first'));
  });

  it('is undefined when the document has no slot with a schema', () => {
    expect(
      declaredInputSchema({
        context: [
          { type: 'input', input: {}, schema: schema('x') },
          { type: 'state', schema: schema('y'), state: {} },
        ],
        schema: true,
      }),
    ).toBeUndefined();
  });
});

describe('input: what it means for the data (MSG-12, DOC-6)', () => {
  const data = inputHandler.data!;

  it('always holds the kind input', () => {
    expect(data.kind).toBe('input');
    expect(data.kindOf({ type: 'input', input: 1 })).toBe('input');
  });

  it('records given values, and nothing for a template slot', () => {
    expect(data.record({ type: 'input', input: { q: 1 } })).toEqual({ ok: true, record: { kind: 'input', path: [], method: 'merge', value: { q: 1 } } });
    expect(data.record({ type: 'input', schema: { type: 'object' } })).toEqual({ ok: true });
  });

  it('shows a slot with nothing given as a slot, so its schema still says what is expected', () => {
    expect(data.show('input', { found: false }, { schema: true, _instance: 'fr' })).toEqual({ type: 'input', schema: true, _instance: 'fr' });
    expect(data.show('input', { found: true, value: 1 }, {})).toEqual({ type: 'input', input: 1 });
  });
});

describe('givenInput (DOC-6)', () => {
  it("gives a run's input with the schema the Request declares, or without one", () => {
    const slot = { type: 'input', schema: { type: 'object' } };
    expect(givenInput({ context: [slot], schema: true }, { q: 1 })).toEqual({ type: 'input', input: { q: 1 }, schema: { type: 'object' } });
    expect(givenInput({ context: [], schema: true }, 'x')).toEqual({ type: 'input', input: 'x' });
  });
});
