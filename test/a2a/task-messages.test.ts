/** The parts of A2A task messages (A2A-4, A2A-8): the input read from a client's message, the approval question and the answers it takes. */
import { type Message, type Part, Role } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { approvalAnswer, approvalQuestion, dataPart, inputOf, textPart } from '../../src/a2a/task-messages.js';
import type { ConfirmRequest } from '../../src/protocol/contracts.js';

/** A client's message holding `parts`. */
function message(...parts: Part[]): Message {
  return { messageId: 'm', contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** An approval asked about `deploy {target}` inside the delegate `release`, with a reason. */
const REQUEST = {
  call: { _tool: 'deploy', target: 'production', _reasoningForCall: 'the tests passed' },
  callId: 'c1',
  tool: { type: 'object' },
  toolName: 'deploy',
  run: { id: 'r2', name: 'release', location: '/release.json', depth: 1, parent: 'r1', trusted: true, model: undefined },
  signal: new AbortController().signal,
} as unknown as ConfirmRequest;

describe('the input of a task (A2A-4)', () => {
  it('is the first data part, whatever text comes with it', () => {
    expect(inputOf(message(textPart('ignored'), dataPart({ a: 1 }), dataPart({ b: 2 })), { type: 'object' })).toEqual({ a: 1 });
  });

  it('is the text as written when the input schema takes a string, even text that is JSON', () => {
    expect(inputOf(message(textPart('42')), { type: 'string' })).toBe('42');
    expect(inputOf(message(textPart('hello'), textPart('world')), { type: 'string' })).toBe('hello\nworld');
  });

  it('is the JSON value the text holds otherwise, else the text for the schema to judge; none without parts', () => {
    expect(inputOf(message(textPart('{"brief": "x"}')), { type: 'object' })).toEqual({ brief: 'x' });
    expect(inputOf(message(textPart('42')), null)).toBe(42);
    expect(inputOf(message(textPart('not json')), { type: 'object' })).toBe('not json');
    expect(inputOf(message(), { type: 'object' })).toBeUndefined();
  });
});

describe('approvals across the boundary (A2A-8)', () => {
  it('asks with a text and the call as a data part, its meta-properties aside', () => {
    const [said, data] = approvalQuestion(REQUEST);
    expect(said?.content).toEqual({
      $case: 'text',
      value: expect.stringMatching(/^Approval needed \(inside delegate "release"\): deploy \[c1\]\. Answer in this task/),
    });
    expect(data?.content).toEqual({
      $case: 'data',
      value: {
        approval: { callId: 'c1', tool: 'deploy', parameters: { target: 'production' }, reason: 'the tests passed', run: { name: 'release', depth: 1 } },
      },
    });
    expect(approvalQuestion(REQUEST, 'Not an answer.')[0]?.content).toMatchObject({ value: expect.stringMatching(/^Not an answer\. Approval needed/) });
  });

  it('takes a decision as a data part; an edit replaces the parameters and keeps the meta-properties', () => {
    expect(approvalAnswer(message(dataPart({ decision: 'approved' })), REQUEST)).toEqual({ decision: 'approved' });
    expect(approvalAnswer(message(dataPart({ decision: 'approved_session' })), REQUEST)).toEqual({ decision: 'approved_session' });
    expect(approvalAnswer(message(dataPart({ decision: 'rejected', reason: 'not today' })), REQUEST)).toEqual({ decision: 'rejected', reason: 'not today' });
    expect(approvalAnswer(message(dataPart({ decision: 'edited', parameters: { target: 'staging', _tool: 'other' } })), REQUEST)).toEqual({
      decision: 'edited',
      call: { _tool: 'deploy', target: 'staging', _reasoningForCall: 'the tests passed' },
    });
  });

  it('takes yes, session and no as text, in any case', () => {
    expect(approvalAnswer(message(textPart(' Yes ')), REQUEST)).toEqual({ decision: 'approved' });
    expect(approvalAnswer(message(textPart('session')), REQUEST)).toEqual({ decision: 'approved_session' });
    expect(approvalAnswer(message(textPart('NO')), REQUEST)).toEqual({ decision: 'rejected' });
  });

  it('says why an answer is none: an unknown word, a decision it does not know, a malformed edit or reason', () => {
    expect(approvalAnswer(message(textPart('perhaps')), REQUEST)).toBe('The answer "perhaps" is not one an approval takes.');
    expect(approvalAnswer(message(), REQUEST)).toBe('The answer "" is not one an approval takes.');
    expect(approvalAnswer(message(dataPart(['approved'])), REQUEST)).toBe('Expected the answer\'s data part to be an object with a "decision".');
    expect(approvalAnswer(message(dataPart({ decision: 'maybe' })), REQUEST)).toBe(
      'Expected "decision" to be "approved", "approved_session", "rejected" or "edited", got "maybe".',
    );
    expect(approvalAnswer(message(dataPart({ decision: 'edited' })), REQUEST)).toBe('Expected "parameters" to be an object when the decision is "edited".');
    expect(approvalAnswer(message(dataPart({ decision: 'rejected', reason: 3 })), REQUEST)).toBe('Expected "reason" to be a string.');
  });
});
