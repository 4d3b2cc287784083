/** Unit tests of src/protocol/messages/data-messages.ts: data-like messages through their handlers (identity, record, the message that shows a kind). */
import { describe, expect, it } from 'vitest';
import { defaultHandlers } from '../../src/protocol/messages/builtin-handlers.js';
import { identityOf as identityWith, isDataMessage, latestFields, recordOf, showKind } from '../../src/protocol/messages/data-messages.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import type { Message } from '../../src/protocol/types.js';

const builtins = defaultHandlers();
const identityOf = (message: Message) => identityWith(message, builtins);
const dataRecordOf = (message: Message) => recordOf(message, builtins);

describe('identityOf (DATA-1)', () => {
  it('is the kind plus the instance for data-like messages', () => {
    expect(identityOf({ type: 'data', kind: 'hr', data: 1 })).toBe(identityOf({ type: 'data', kind: 'hr', data: 2, _path: 'x' }));
    expect(identityOf({ type: 'state', state: 1 })).toBe(identityOf({ type: 'data', kind: 'state', data: 1 }));
    expect(identityOf({ type: 'input', input: 1 })).toBe(identityOf({ type: 'data', kind: 'input', data: 1 }));
    expect(identityOf({ type: 'state', state: 1, _instance: 'fr' })).not.toBe(identityOf({ type: 'state', state: 1 }));
    expect(identityOf({ type: 'state', state: 1, _instance: 'fr' })).not.toBe(identityOf({ type: 'state', state: 1, _instance: 'de' }));
    expect(identityOf({ type: 'data', kind: 'a', data: 1 })).not.toBe(identityOf({ type: 'data', kind: 'b', data: 1 }));
  });

  it('is undefined for other messages', () => {
    expect(identityOf({ type: 'user', text: 'x' })).toBeUndefined();
    expect(identityOf({ type: 'tool', tool: {} })).toBeUndefined();
  });
});

describe('recordOf: the record of a data-like message, by its handler', () => {
  it('turns a document data message into a root merge record of its kind', () => {
    expect(dataRecordOf({ type: 'data', kind: 'profile', data: { a: 1 } })).toEqual({ kind: 'profile', path: [], method: 'merge', value: { a: 1 } });
  });

  it('gives a data message without a kind the kind data', () => {
    expect(dataRecordOf({ type: 'data', data: 1 } as Message)?.kind).toBe('data');
  });

  it('turns input and state messages into records of their own kind', () => {
    expect(dataRecordOf({ type: 'input', input: { q: 'x' }, _instance: 'i1' })).toEqual({
      kind: 'input',
      instance: 'i1',
      path: [],
      method: 'merge',
      value: { q: 'x' },
    });
    expect(dataRecordOf({ type: 'state', state: { n: 0 } })).toEqual({ kind: 'state', path: [], method: 'merge', value: { n: 0 } });
  });

  it('gives no record for an input template slot or a non-data message', () => {
    expect(dataRecordOf({ type: 'input', schema: { type: 'object' } })).toBeUndefined();
    expect(dataRecordOf({ type: 'user', text: 'hi' })).toBeUndefined();
  });

  it('reads the path, method, call and date of a write message', () => {
    const message = {
      type: 'data',
      kind: 'state',
      data: 'x',
      _path: 'items[0].name',
      _outputMethod: 'push',
      _call: 'c1',
      _date: '2024-01-01T00:00:00.000Z',
      _instance: 'i2',
    } as const;
    expect(dataRecordOf(message)).toEqual({
      kind: 'state',
      instance: 'i2',
      path: ['items', 0, 'name'],
      method: 'push',
      value: 'x',
      call: 'c1',
      date: '2024-01-01T00:00:00.000Z',
    });
  });

  it('defaults the method of a write to set and reads an empty path as the root', () => {
    expect(dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: '' })).toMatchObject({ path: [], method: 'set' });
  });

  it('refuses an unreadable path or method with an invalid_request error', () => {
    expect(() => dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: 'a[' })).toThrow(ProtocolError);
    expect(() => dataRecordOf({ type: 'data', kind: 'state', data: 1, _path: 'a', _outputMethod: 'replace' } as Message)).toThrow(/_outputMethod "replace"/);
  });
});

describe('isDataMessage', () => {
  it('asks the handler of the type, so a registered data-like type is data too', () => {
    const handlers = defaultHandlers().register({ ...builtins.get('data')!, type: 'note' });
    expect(isDataMessage({ type: 'note', kind: 'k', data: 1 }, handlers)).toBe(true);
    expect(isDataMessage({ type: 'note', kind: 'k', data: 1 }, builtins)).toBe(false);
  });
});

describe('latestFields', () => {
  it('takes the newest schema and description among the messages of a kind', () => {
    const members: Message[] = [
      { type: 'state', state: 1, schema: { type: 'number' }, description: 'old' },
      { type: 'data', kind: 'state', data: 2, description: 'new' },
      { type: 'data', kind: 'state', data: 3 },
    ];
    expect(latestFields(members)).toEqual({ schema: { type: 'number' }, description: 'new' });
  });
});

describe('showKind', () => {
  it('shows a kind by the handler whose type holds it, whatever type its messages have', () => {
    const writes: Message[] = [{ type: 'data', kind: 'state', data: 1 }];
    expect(showKind('state', { found: true, value: 1 }, {}, writes, builtins)).toEqual({ type: 'state', state: 1 });
  });

  it("shows any other kind by its messages' handler, and nothing without one", () => {
    const messages: Message[] = [{ type: 'data', kind: 'hr', data: 1 }];
    expect(showKind('hr', { found: true, value: 1 }, {}, messages, builtins)).toEqual({ type: 'data', kind: 'hr', data: 1 });
    expect(showKind('hr', { found: true, value: 1 }, {}, [], builtins)).toBeUndefined();
  });
});
