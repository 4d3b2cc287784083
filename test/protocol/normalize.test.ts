/** Unit tests of src/protocol/tools/normalize-tool.ts: the shorthand of tools (TOOL-1, TOOL-3). */
import { describe, expect, it } from 'vitest';
import { normalizeTool } from '../../src/protocol/tools/normalize-tool.js';
import type { ToolSchema } from '../../src/protocol/types.js';

describe('normalizeTool (TOOL-1, TOOL-3)', () => {
  it.each(['_delegate', '_activity', '_resolve', '_approval'])('moves a top-level %s value into properties as a const', (key) => {
    expect(normalizeTool({ [key]: 'value' })).toEqual({ type: 'object', properties: { [key]: { const: 'value' } } });
  });

  it('moves top-level _scopes into properties as a const, even though the value is an array', () => {
    expect(normalizeTool({ _scopes: ['state', 'input'] })).toEqual({ type: 'object', properties: { _scopes: { const: ['state', 'input'] } } });
  });

  it('wraps an object value in const too: a wider schema must be written inside properties', () => {
    expect(normalizeTool({ _delegate: { enum: ['a.json'] } })).toEqual({ type: 'object', properties: { _delegate: { const: { enum: ['a.json'] } } } });
  });

  it('moves a top-level _output schema to properties._output as it is (not as a const)', () => {
    const output = { type: 'object', required: ['go'] };
    expect(normalizeTool({ _output: output })).toEqual({ type: 'object', properties: { _output: output } });
  });

  it('makes type object explicit and keeps a different type for validation to name', () => {
    expect(normalizeTool({})).toEqual({ type: 'object', properties: {} });
    expect(normalizeTool({ type: 'string' } as unknown as ToolSchema).type).toBe('string');
  });

  it('keeps parameters, description, required and other keywords', () => {
    const tool: ToolSchema = {
      description: 'Weather.',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
      _scopes: ['input'],
    };
    expect(normalizeTool(tool)).toEqual({
      type: 'object',
      description: 'Weather.',
      properties: { city: { type: 'string' }, _scopes: { const: ['input'] } },
      required: ['city'],
      additionalProperties: false,
    });
  });

  it('keeps a chosen meta-property already declared inside properties', () => {
    const tool: ToolSchema = { type: 'object', properties: { _scopes: { type: 'array', items: { enum: ['state'] } } } };
    expect(normalizeTool(tool)).toEqual(tool);
  });

  it('does not mutate the tool it is given', () => {
    const tool: ToolSchema = { _delegate: './a.json', _output: true, properties: { x: { type: 'string' } } };
    const copy = structuredClone(tool);
    normalizeTool(tool);
    expect(tool).toEqual(copy);
  });
});

describe('keys named __proto__ in tools (TOOL-1)', () => {
  it('keeps a __proto__ keyword of a tool schema as a keyword, for the schema compiler to judge', () => {
    const tool = normalizeTool(JSON.parse('{"description":"d","__proto__":{"x":1}}'));
    expect(Object.getPrototypeOf(tool)).toBe(Object.prototype);
    expect(Object.keys(tool)).toEqual(['type', 'description', '__proto__', 'properties']);
  });
});
