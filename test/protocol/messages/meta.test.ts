/** Unit tests of src/protocol/messages/meta.ts: the shorthand, the rendering of meta messages and what they ask of the answer. */
import { describe, expect, it } from 'vitest';
import { toStrictSchema } from '../../../src/models/strict-schema.js';
import { compileSchema } from '../../../src/protocol/schemas.js';
import { composeSolutionSchema } from '../../../src/protocol/tools/tools.js';
import type { JsonSchema } from '../../../src/protocol/types.js';
import { builtins, freshState, normalize, render } from '../../helpers/builtin-messages.js';

describe('meta: the shorthand (MSG-6)', () => {
  it('folds every field but type into meta', () => {
    expect(normalize({ type: 'meta', name: 'doc', version: '2', schema: 'kept' })).toEqual({
      type: 'meta',
      meta: { name: 'doc', version: '2', schema: 'kept' },
    });
  });

  it('keeps a written meta field as it is', () => {
    expect(normalize({ type: 'meta', meta: { id: 'x' } })).toEqual({ type: 'meta', meta: { id: 'x' } });
  });
});

describe('meta: rendering (MSG-17)', () => {
  it('renders its value as JSON and adds an optional object property meta to the Solution schema', () => {
    const state = render({ type: 'meta', meta: { id: 'doc-7', version: '3' } });
    expect(state.messages).toHaveLength(1);
    expect(state.messages[0]?.content).toContain(JSON.stringify({ id: 'doc-7', version: '3' }));
    expect(state.solutionProperties.meta).toMatchObject({ type: 'object' });
  });
});

describe('meta: what the model must write (MSG-23)', () => {
  it('asks for the shape of the context meta when the message gives no schema: the same keys, the same types, nothing else', () => {
    const meta = {
      domain: 'reactor.ideas.services',
      path: '/games/321',
      version: '1.2.3',
      branches: ['main'],
      createdAt: '2025-10-26T10:00:00Z',
      parent: null,
    };
    const schema = render({ type: 'meta', meta }).solutionProperties.meta;
    const validate = compileSchema(schema as JsonSchema);
    expect(validate({ ...meta, version: '1.2.4', branches: ['main', 'b'], parent: 'x' })).toBe(true);
    expect(validate({ ...meta, version: 124 })).toBe(false);
    expect(validate({ ...meta, extra: 1 })).toBe(false);
    const { path: _path, ...withoutPath } = meta;
    expect(validate(withoutPath)).toBe(false);
  });

  it('asks for what the message schema says when it gives one', () => {
    const schema = { type: 'object', properties: { version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' } }, required: ['version'] };
    const offered = render({ type: 'meta', meta: { version: '1.0.0' }, schema }).solutionProperties.meta;
    const validate = compileSchema(offered as JsonSchema);
    expect(validate({ version: '1.0.1' })).toBe(true);
    expect(validate({ version: 'one' })).toBe(false);
  });

  it('requires a meta in the answer that ends the run, and nowhere else', () => {
    const state = render({ type: 'meta', meta: { version: '1' } });
    const check = (answer: Record<string, unknown>) => state.answerChecks.flatMap((rule) => rule(answer));
    expect(check({ calls: [], output: null })).toEqual([]);
    expect(check({ calls: [] })).toEqual([]);
    expect(check({ calls: [], output: 'done', meta: { version: '2' } })).toEqual([]);
    expect(check({ calls: [], output: 'done' })).toEqual([expect.stringContaining('has no meta')]);
  });

  it('offers the Solution part once, for the last meta message of the context', () => {
    const first = { type: 'meta', meta: { id: 'a' } } as const;
    const last = { type: 'meta', meta: { id: 'b', version: 2 } } as const;
    const state = freshState([first, last]);
    for (const message of [first, last]) builtins.get('meta')?.render?.(message, state);
    expect(state.answerChecks).toHaveLength(1);
    expect(Object.keys((state.solutionProperties.meta as { properties: object }).properties)).toEqual(['id', 'version']);
  });
});

describe('meta: within the strict subset (MODEL-7)', () => {
  it('offers a meta that OpenAI strict mode can express, where a free-form object could not be', () => {
    const state = render({ type: 'meta', meta: { path: '/games/321', version: '1.2.3', branches: ['main'], parent: null } });
    const schema = composeSolutionSchema(new Map(), { type: 'string' }, () => false, state.solutionProperties);
    expect(toStrictSchema(schema)).toMatchObject({ strict: true });
  });
});
