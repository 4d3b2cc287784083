/** What the messages of an A2A task hold (A2A-4 to A2A-8): the input read from the client's parts, and the parts the agent answers with. */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { approvalParameters, editedCall } from '../approvals/approval-policy.js';
import type { ConfirmDecision, ConfirmRequest } from '../protocol/contracts.js';
import { notJsonPlaceholder, toJsonData } from '../protocol/json-data.js';
import { parseJson } from '../protocol/json.js';
import type { JsonSchema } from '../protocol/types.js';
import { JSON_MEDIA_TYPE } from './served-card.js';

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

/** A JSON data part holding `value` as JSON data (what is not JSON becomes a placeholder, as in traces). */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: 'data', value: toJsonData(value, { replace: notJsonPlaceholder }) ?? null },
    mediaType: JSON_MEDIA_TYPE,
    filename: '',
    metadata: undefined,
  };
}

/** A message of the agent in a task. */
export function agentMessage(task: { taskId: string; contextId: string }, parts: Part[]): Message {
  return {
    messageId: randomUUID(),
    taskId: task.taskId,
    contextId: task.contextId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The data parts of a message, then its text joined: what the client said, whichever way it said it. */
function contentOf(message: Message): { data: unknown[]; text: string | undefined } {
  const data: unknown[] = [];
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'data') data.push(part.content.value);
    else if (part.content?.$case === 'text') texts.push(part.content.value);
  }
  return { data, text: texts.length === 0 ? undefined : texts.join('\n') };
}

/** Whether a schema takes strings only: its text is then the input as written. */
function takesText(schema: JsonSchema | null): boolean {
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'string';
}

/**
 * The run's input in the client's first message (A2A-4): its first data part's value; else its
 * text, as written when the declared input schema takes a string, else parsed as JSON when it is
 * JSON (and as written when it is not, for the input schema to judge); undefined when the message
 * holds neither (no input).
 */
export function inputOf(message: Message, schema: JsonSchema | null): unknown {
  const { data, text } = contentOf(message);
  if (data.length > 0) return data[0];
  if (text === undefined) return undefined;
  if (takesText(schema)) return text;
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

/** The answers an approval takes, for the question and for an answer that is none of them. */
const ANSWERS =
  'Answer in this task with a data part {"decision": "approved" | "approved_session" | "rejected" | "edited", "reason"?: string, "parameters"?: {...}} ' +
  "(parameters replace the call's when edited), or with the text yes, session or no.";

/**
 * The parts of the `input-required` status an approval becomes (A2A-8): a text saying which call
 * waits and how to answer, and a data part `{approval: {callId, tool, parameters, reason?, run:
 * {name, depth}}}`; `problem` says why a previous answer was not taken.
 */
export function approvalQuestion(request: ConfirmRequest, problem?: string): Part[] {
  const where = request.run.depth > 0 ? ` (inside delegate "${request.run.name}")` : '';
  const reason = typeof request.call._reasoningForCall === 'string' ? request.call._reasoningForCall : undefined;
  const text = `${problem === undefined ? '' : `${problem} `}Approval needed${where}: ${request.toolName} [${request.callId}]. ${ANSWERS}`;
  const approval = {
    callId: request.callId,
    tool: request.toolName,
    parameters: approvalParameters(request.call),
    ...(reason === undefined ? {} : { reason }),
    run: { name: request.run.name, depth: request.run.depth },
  };
  return [textPart(text), dataPart({ approval })];
}

/** The words a text answer may be, and the decision each is. */
const TEXT_ANSWERS: Record<string, 'approved' | 'approved_session' | 'rejected'> = {
  y: 'approved',
  yes: 'approved',
  approve: 'approved',
  approved: 'approved',
  s: 'approved_session',
  session: 'approved_session',
  approved_session: 'approved_session',
  n: 'rejected',
  no: 'rejected',
  reject: 'rejected',
  rejected: 'rejected',
};

/**
 * The decision a client's answer to an approval holds (A2A-8), or a sentence saying why it holds
 * none: a data part `{decision, reason?, parameters?}` (an edit keeps the call's meta-properties),
 * or a text from {@link TEXT_ANSWERS}.
 */
export function approvalAnswer(message: Message, request: ConfirmRequest): ConfirmDecision | string {
  const { data, text } = contentOf(message);
  const answer = data[0];
  if (answer === undefined) {
    const decision = text === undefined ? undefined : TEXT_ANSWERS[text.trim().toLowerCase()];
    return decision === undefined ? `The answer ${JSON.stringify(text ?? '')} is not one an approval takes.` : { decision };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return 'Expected the answer\'s data part to be an object with a "decision".';
  const { decision, reason, parameters } = answer as Record<string, unknown>;
  if (reason !== undefined && typeof reason !== 'string') return 'Expected "reason" to be a string.';
  const because = reason === undefined ? {} : { reason };
  if (decision === 'approved' || decision === 'approved_session') return { decision };
  if (decision === 'rejected') return { decision, ...because };
  if (decision === 'edited') {
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
      return 'Expected "parameters" to be an object when the decision is "edited".';
    return { decision, call: editedCall(request.call, parameters as Record<string, unknown>), ...because };
  }
  return `Expected "decision" to be "approved", "approved_session", "rejected" or "edited", got ${JSON.stringify(decision ?? null)}.`;
}
