/** Attachments of a delegating call (ATT-1..ATT-7): confined, checked against the caller's then the callee's policy, approved one by one, and handed to the child as `attachment` data messages. */
import { extname } from 'node:path';
import { abortable } from '../protocol/cancellation.js';
import { cancelled, ProtocolError, UserError } from '../protocol/errors.js';
import type { ConfirmHook, RunInfo } from '../protocol/contracts.js';
import type { RunTrace } from '../protocol/trace/trace.js';
import type { Message, RequestDocument, ToolSchema } from '../protocol/types.js';
import { type AttachmentLocator, readAttachmentFile } from './attachment-path.js';
import { attachmentPolicyOf, checkAttachmentPolicy } from './attachment-policy.js';

/** Text attachments are inlined up to this many bytes (ATT-5); the rest is cut and marked `truncated`. */
export const MAX_INLINE_TEXT_BYTES = 100_000;

/** What the trace and an approval show of an attachment (ATT-4, ATT-7): never its bytes. */
export interface AttachmentRecord {
  path: string;
  mediaType: string;
  bytes: number;
}

/** A prepared attachment: its record, its content and the data message the child sees (ATT-5). */
export interface PreparedAttachment extends AttachmentRecord {
  content: Uint8Array;
  message: Message;
}

/** The delegating call whose attachments are prepared. */
export interface AttachmentCall {
  /** The caller's run. */
  run: RunInfo;
  /** The caller's document: its `config.attachments` is the caller's policy. */
  caller: RequestDocument | undefined;
  /** The callee's document: its `config.attachments` is the callee's policy. */
  callee: RequestDocument;
  /** The name the approval shows as `target` (the worker's tool name). */
  target: string;
  /** The call's id and tool, for the confirm hook. */
  callId: string;
  tool: ToolSchema;
  /** The delegating call's tool name, as its approval events name it (TRACE-8). */
  toolName?: string;
  /** The caller's trace: each attachment's approval is traced there (TRACE-8, ATT-4). */
  trace?: RunTrace;
  /** The folder paths are confined to: the caller's root. */
  root: string;
  /** Places `<sandbox>/…` paths in their sandbox (ATT-2). */
  locate?: AttachmentLocator;
  /** Asked once per attachment when a policy (or `approvalRequired`) asks (ATT-4). */
  confirm?: ConfirmHook;
  /** True when a tool rule asks for approval of the call's attachments (ATT-4). */
  approvalRequired?: boolean;
  signal?: AbortSignal;
}

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.xml': 'application/xml',
  '.html': 'text/html',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
};

/** The media type of a path by its suffix (ATT-5); `application/octet-stream` when unknown. */
export function mediaTypeOf(path: string): string {
  return MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** True for media types inlined as text (ATT-5). */
export function isTextMediaType(mediaType: string): boolean {
  return mediaType.startsWith('text/') || ['application/json', 'application/yaml', 'application/xml'].includes(mediaType);
}

/** The data message a child sees for one attachment (ATT-5): pushed onto the kind `attachment`. */
export function attachmentMessage(record: AttachmentRecord, content: Uint8Array): Message {
  const data: Record<string, unknown> = { ...record };
  if (isTextMediaType(record.mediaType)) {
    const cut = content.byteLength > MAX_INLINE_TEXT_BYTES;
    data.text = new TextDecoder('utf-8').decode(cut ? content.subarray(0, MAX_INLINE_TEXT_BYTES) : content);
    if (cut) data.truncated = true;
  }
  return { type: 'data', kind: 'attachment', data, _path: '', _outputMethod: 'push' };
}

/**
 * Puts one attachment to the confirm hook (ATT-4). Whether to ask was decided by ATT-4, so the
 * hook's `appliesTo`, which judges calls by their tool (CALL-8), is not consulted: the approval
 * policy's says no to a tool without `_approval`, and would wave through every attachment a
 * `config.attachments` policy wants approved.
 */
async function approve(call: AttachmentCall, record: AttachmentRecord): Promise<void> {
  if (call.confirm === undefined) return;
  const shown = { _tool: call.target, path: record.path, bytes: record.bytes, target: call.target };
  const request = {
    call: shown,
    callId: call.callId,
    tool: call.tool,
    toolName: call.target,
    run: call.run,
    signal: call.signal ?? new AbortController().signal,
  };
  // Traced like a call's approval, so the approvals list and an audit of what was shared see it (TRACE-8).
  const tool = call.toolName ?? call.target;
  const { _tool: _shown, ...params } = shown;
  call.trace?.emit('approval.requested', { call: call.callId, tool, params });
  // A cancelled run does not wait for an answer that may never come (as for a call, CALL-8).
  const decision = await abortable(Promise.resolve(call.confirm(request)), call.signal, cancelled);
  call.trace?.emit('approval.decided', {
    call: call.callId,
    tool,
    decision: decision.decision,
    reason: 'reason' in decision ? (decision.reason ?? null) : null,
    ...(decision.by === undefined ? {} : { by: decision.by }),
  });
  if (decision.decision === 'approved' || decision.decision === 'approved_session') return;
  const reason = 'reason' in decision && decision.reason ? `: ${decision.reason}` : '';
  throw new UserError('rejected_by_user', `The attachment "${record.path}" for "${call.target}" was not approved${reason}.`, {
    path: record.path,
    target: call.target,
  });
}

/**
 * Prepares a delegating call's attachments (ATT-1..ATT-5), in order: every path is confined and
 * read (escapes → `delegate_forbidden`), the caller's `config.attachments` policy is checked, then
 * the callee's (→ `invalid_params` naming rule and side), then each attachment is approved through
 * the confirm hook when either policy says `approval: "required"` or a tool rule asks
 * (→ `rejected_by_user`). Returns the attachments with the messages the child sees.
 */
export async function prepareAttachments(call: AttachmentCall, paths: readonly string[]): Promise<PreparedAttachment[]> {
  if (!Array.isArray(paths) || paths.some((path) => typeof path !== 'string'))
    throw new ProtocolError('invalid_params', 'attachments must be an array of paths (strings).');
  const callerPolicy = attachmentPolicyOf(call.caller);
  const calleePolicy = attachmentPolicyOf(call.callee);
  // No file is read past what the smaller maxBytes leaves (ATT-3): one that would pass it is
  // refused below by its size, unread, however big it is.
  let budget = Math.min(callerPolicy?.maxBytes ?? Number.POSITIVE_INFINITY, calleePolicy?.maxBytes ?? Number.POSITIVE_INFINITY);
  const files = [];
  for (const path of paths) {
    const file = await readAttachmentFile(call.root, path, call.locate, Math.max(budget, 0));
    files.push(file);
    budget -= file.bytes;
  }
  const sized = files.map(({ path, bytes }) => ({ path, bytes }));
  checkAttachmentPolicy('caller', callerPolicy, sized);
  checkAttachmentPolicy('callee', calleePolicy, sized);
  const ask = call.approvalRequired === true || callerPolicy?.approval === 'required' || calleePolicy?.approval === 'required';
  const prepared: PreparedAttachment[] = [];
  for (const file of files) {
    const record = { path: file.path, mediaType: mediaTypeOf(file.path), bytes: file.bytes };
    if (ask) await approve(call, record);
    prepared.push({ ...record, content: file.content, message: attachmentMessage(record, file.content) });
  }
  return prepared;
}

/** What the trace records of prepared attachments (ATT-7): path, media type and size, never the bytes. */
export function attachmentRecords(prepared: readonly PreparedAttachment[]): AttachmentRecord[] {
  return prepared.map(({ path, mediaType, bytes }) => ({ path, mediaType, bytes }));
}
