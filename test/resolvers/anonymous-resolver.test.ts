/** Unit tests of the anonymous resolver: the Request it builds from a tool. */
import { describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/protocol/types.js';
import { AnonymousResolver, anonymousRequest, defaultAnonymousInstructions } from '../../src/resolvers/anonymous-resolver.js';
import { registered } from './helpers.js';

const resolver = registered(new AnonymousResolver());

describe('AnonymousResolver', () => {
  it('uses the description as instructions, the parameters without meta-properties as input, and _output as schema', async () => {
    const tool: ToolSchema = {
      type: 'object',
      description: 'Translate the text into French.',
      properties: {
        text: { type: 'string' },
        _delegate: { const: 'anonymous' },
        _scopes: { const: ['state'] },
        _output: { type: 'object', properties: { translation: { type: 'string' } }, required: ['translation'] },
      },
      required: ['text', '_delegate'],
      additionalProperties: false,
    };
    const resolved = await resolver.resolve('anonymous', { toolName: 'translate', tool });
    expect(resolved).toMatchObject({ name: 'anonymous:translate', location: 'anonymous:translate', trusted: true });
    // It is the referring document's own tool: exactly as trusted as that document.
    expect((await resolver.resolve('anonymous', { toolName: 'translate', tool, trusted: false })).trusted).toBe(false);
    const [system, input] = resolved.document.context;
    expect(system).toEqual({ type: 'system', text: 'Translate the text into French.' });
    expect(input).toMatchObject({
      type: 'input',
      schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    });
    expect(input && 'input' in input).toBe(false);
    expect(resolved.document.schema).toEqual(tool.properties?._output);
  });

  it('reads shorthand meta-properties at the top level of the tool', async () => {
    const tool = { description: 'Do it.', _delegate: 'anonymous', _output: { type: 'string' }, properties: { x: { type: 'number' } } } as ToolSchema;
    const resolved = await resolver.resolve('anonymous', { toolName: 'short', tool });
    expect(resolved.document.schema).toEqual({ type: 'string' });
    expect(resolved.document.context[1]).toMatchObject({ schema: { type: 'object', properties: { x: { type: 'number' } } } });
  });

  it('falls back to a default instruction and an any-value output schema', async () => {
    const resolved = await resolver.resolve('anonymous', { toolName: 'bare', tool: { type: 'object' } });
    expect(resolved.document.context[0]).toEqual({ type: 'system', text: defaultAnonymousInstructions('bare') });
    expect(resolved.document.schema).toBe(true);
    expect(anonymousRequest('bare', { type: 'object' }).schema).toBe(true);
  });

  it('accepts "anonymous" whatever the base, and nothing else', () => {
    const tool: ToolSchema = { type: 'object' };
    expect(resolver.accepts('anonymous')).toBe(true);
    expect(resolver.accepts('anonymous#sha256-x')).toBe(true);
    expect(resolver.accepts('./anonymous')).toBe(false);
    expect(resolver.accepts('anonymous.json')).toBe(false);
    expect(new AnonymousResolver().accepts('anonymous', { base: 'https://h/x.json', toolName: 't', tool })).toBe(true);
  });
});
