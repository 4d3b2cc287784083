/** Unit tests of src/protocol/errors.ts: typed errors with stable codes (ERR-1, ERR-2) and document problems (DOC-5). */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ActivityError,
  BoundError,
  CallError,
  DelegateError,
  type ErrorCode,
  ModelError,
  ProtocolError,
  RequestError,
  UsageError,
  UserError,
  formatProblem,
  toProtocolError,
} from '../../src/protocol/errors.js';

describe('ProtocolError (ERR-1)', () => {
  it('carries a code, a message and data, and serialises to {code, message} with its data beside them (ERR-1)', () => {
    const error = new CallError('unknown_tool', 'There is no tool named "x".', { toolName: 'x', available: ['a'] });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('CallError');
    expect(error.data).toEqual({ toolName: 'x', available: ['a'] });
    expect(JSON.parse(JSON.stringify(error))).toEqual({ code: 'unknown_tool', message: 'There is no tool named "x".', toolName: 'x', available: ['a'] });
  });

  it('keeps its code and message over data fields of the same name, and writes data JSON cannot hold as placeholders', () => {
    const error = new CallError('invalid_params', 'Bad.', { code: 'other', message: 'other', count: 10n });
    expect(error.toJSON()).toEqual({ code: 'invalid_params', message: 'Bad.', count: expect.stringContaining('[not JSON') });
  });

  it('carries every problem of a RequestError with its document and pointer', () => {
    const problem = { document: 'doc.json', pointer: '/context/0', message: 'Expected a message.' };
    expect(new RequestError([problem]).toJSON()).toMatchObject({ code: 'invalid_request', problems: [problem] });
  });

  it('names each class by who is at fault (ERR-2)', () => {
    const classes = [CallError, ModelError, ActivityError, DelegateError, BoundError, UserError];
    for (const Class of classes) expect(new Class('model_error', 'm').name).toBe(Class.name);
    expect(new UsageError('bad option')).toMatchObject({ name: 'UsageError', code: 'usage_error', message: 'bad option' });
  });

  it('keeps a cause', () => {
    const cause = new Error('inner');
    expect(new ModelError('model_error', 'outer', {}, { cause }).cause).toBe(cause);
  });
});

describe('formatProblem', () => {
  it('formats a problem as file#/pointer: message', () => {
    expect(formatProblem({ document: '/r/a.json', pointer: '/context/0/type', message: 'Expected x.' })).toBe('/r/a.json#/context/0/type: Expected x.');
    expect(formatProblem({ document: 'https://h/a.json', pointer: '', message: 'Expected y.' })).toBe('https://h/a.json#: Expected y.');
  });

  it('formats a problem in text that is not JSON as file:line:column: message', () => {
    expect(formatProblem({ document: '/r/a.json', pointer: '', message: 'Expected valid JSON.', line: 3, column: 7 })).toBe(
      '/r/a.json:3:7: Expected valid JSON.',
    );
  });
});

describe('RequestError (DOC-5)', () => {
  const problems = [
    { document: '/r/a.json', pointer: '/schema', message: 'Expected a JSON Schema.' },
    { document: '/r/a.json', pointer: '/context/1/type', message: 'Expected a registered type.' },
  ];

  it('lists every problem, one per line, each with its document and pointer', () => {
    const error = new RequestError(problems);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe(
      'Invalid Request document:\n  /r/a.json#/schema: Expected a JSON Schema.\n  /r/a.json#/context/1/type: Expected a registered type.',
    );
    expect(error.problems).toBe(problems);
    expect(error.data.problems).toBe(problems);
  });

  it('may carry another code, such as delegate_not_found for a missing file', () => {
    expect(new RequestError(problems, 'delegate_not_found').code).toBe('delegate_not_found');
  });
});

describe('toProtocolError (ERR-2)', () => {
  it('returns a ProtocolError as it is', () => {
    const error = new BoundError('max_depth_exceeded', 'deep', { maxDepth: 3 });
    expect(toProtocolError(error)).toBe(error);
  });

  it('wraps anything else with the fallback code (activity_error by default), keeping the original as cause', () => {
    const thrown = new TypeError('boom');
    const wrapped = toProtocolError(thrown);
    expect(wrapped).toBeInstanceOf(ProtocolError);
    expect(wrapped).toMatchObject({ code: 'activity_error', message: 'boom', cause: thrown });
    expect(toProtocolError(thrown, 'model_error').code).toBe('model_error');
  });

  it('wraps values that are not errors with their text', () => {
    expect(toProtocolError('just a string')).toMatchObject({ code: 'activity_error', message: 'just a string', cause: 'just a string' });
    expect(toProtocolError(42).message).toBe('42');
  });

  it('turns an AbortError into cancelled_by_user (LOOP-10)', () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    const wrapped = toProtocolError(abort, 'model_error');
    expect(wrapped).toBeInstanceOf(UserError);
    expect(wrapped).toMatchObject({ code: 'cancelled_by_user', cause: abort });
  });
});

describe('typed error data (ERR-9)', () => {
  it('types the data of each code: the fields every producer sets are required, and an error of any code reads them typed', () => {
    const unknown = new CallError('unknown_tool', 'There is no tool named "x".', { toolName: 'x', available: ['a'] });
    expectTypeOf(unknown.data.toolName).toEqualTypeOf<string>();
    expectTypeOf(unknown.data.available).toEqualTypeOf<string[]>();
    const any: ProtocolError = unknown;
    expectTypeOf(any.data.toolName).toEqualTypeOf<string | undefined>();
    expectTypeOf(any.data.missing).toEqualTypeOf<string[] | undefined>();
    // Codes whose data varies with the producer are open-ended, their known fields typed.
    expect(new CallError('invalid_params', 'Bad.', { toolName: 'x', side: 'left' }).data.side).toBe('left');
    expect(new UsageError('Bad.').data).toEqual({});
    // An error of a code only known at run time (read back from JSON) takes any data.
    const code = 'unknown_tool' as ErrorCode;
    expect(new ProtocolError(code, 'From JSON.', { whatever: 1 }).data).toEqual({ whatever: 1 });
  });

  it('refuses, at compile time, data that lacks a field its code requires or gives one the wrong type', () => {
    // Never called: `npm run typecheck` checks that each line below fails to compile.
    const wrong = () => [
      // @ts-expect-error unknown_tool requires toolName (and available).
      new CallError('unknown_tool', 'There is no tool named "x".', {}),
      // @ts-expect-error unknown_tool requires its data.
      new CallError('unknown_tool', 'There is no tool named "x".'),
      // @ts-expect-error maxSteps is a number.
      new BoundError('max_steps_exceeded', 'Too many steps.', { maxSteps: '3' }),
      // @ts-expect-error missing lists the references as text.
      new CallError('unresolved_reference', 'Never resolved.', { missing: [1] }),
      // @ts-expect-error toolName is a string, in open-ended data too.
      new CallError('invalid_params', 'Bad.', { toolName: 3 }),
    ];
    expect(typeof wrong).toBe('function');
  });
});
