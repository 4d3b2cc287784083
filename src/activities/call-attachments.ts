/** A delegating call's attachments, from its parameters to what its child gets (ATT-1 to ATT-7): one way for the Delegation Activity and `worker_call`. */
import { requiresApproval } from '../approvals/approval-policy.js';
import { sandboxFolder, suffixAllowed } from '../files/sandbox-path.js';
import type { SandboxSpec } from '../protocol/tools/file-tools.js';
import { DelegateError } from '../protocol/errors.js';
import { isNativePartType, type ProviderFile } from '../protocol/model.js';
import type { ActivityEnvironment } from '../protocol/contracts.js';
import type { Call, Message, RequestDocument, ToolSchema } from '../protocol/types.js';
import type { AttachmentLocator } from './attachment-path.js';
import { attachmentPolicyOf } from './attachment-policy.js';
import { type AttachmentRecord, attachmentRecords, type PreparedAttachment, prepareAttachments } from './attachments.js';

/** Where a call's attachment paths are read from (ATT-2). */
export interface AttachmentPlaces {
  /** The folder plain paths are confined to: the caller's root (default: the working directory). */
  root?: string;
  /** Places `<sandbox>/…` paths; by default the caller's own `files` sandboxes (RunInfo.sandboxes) do. */
  locate?: AttachmentLocator;
}

/** True when the callee declares `config.attachments`: its calls' `attachments` are files, not input (ATT-1). */
export function takesAttachments(document: RequestDocument): boolean {
  return attachmentPolicyOf(document) !== undefined;
}

/**
 * Places attachment paths whose first segment names one of the caller's sandboxes in that
 * sandbox's real folder (ATT-2): the folder confined as for the file tools (FILES-2), the file's
 * suffix allowed by the sandbox (else `delegate_forbidden`), and no file above its `maxBytes`.
 * Any other path is left to the caller's root.
 */
export function sandboxLocator(sandboxes: Readonly<Record<string, SandboxSpec>>, root: string, location: string): AttachmentLocator {
  return async (segments) => {
    const [name = '', ...rest] = segments;
    if (!Object.hasOwn(sandboxes, name)) return undefined;
    const spec = sandboxes[name] as SandboxSpec;
    const folder = await sandboxFolder(name, spec, root, location);
    const path = segments.join('/');
    if (!suffixAllowed(spec, rest.join('/')))
      throw new DelegateError('delegate_forbidden', `Attachment "${path}" is forbidden: the sandbox "${name}" does not allow this file's suffix.`, {
        path,
        sandbox: name,
      });
    return { root: folder, segments: rest, ...(spec.maxBytes === undefined ? {} : { limit: { maxBytes: spec.maxBytes, rule: `the sandbox "${name}"` } }) };
  };
}

/** The locator of a call: the one given, else the caller's sandboxes, else none (ATT-2). */
function locatorOf(environment: ActivityEnvironment, places: AttachmentPlaces, root: string): AttachmentLocator | undefined {
  if (places.locate !== undefined) return places.locate;
  const sandboxes = environment.run.sandboxes;
  return sandboxes === undefined ? undefined : sandboxLocator(sandboxes, root, environment.run.location);
}

/**
 * The call's attachments, prepared before the child starts (ATT-1 to ATT-5): only when the callee
 * declares `config.attachments` and the call passes `attachments`; none otherwise. `target` is the
 * name an approval shows (the worker's).
 */
export async function callAttachments(
  call: Call,
  tool: ToolSchema,
  callee: RequestDocument,
  environment: ActivityEnvironment,
  places: AttachmentPlaces,
  target: string = call._tool,
): Promise<PreparedAttachment[]> {
  const paths = call.attachments;
  if (paths === undefined || !takesAttachments(callee)) return [];
  const caller = environment.run.attachments === undefined ? undefined : { context: [], schema: true, config: { attachments: environment.run.attachments } };
  const confirm = environment.confirm;
  const root = places.root ?? process.cwd();
  const locate = locatorOf(environment, places, root);
  return prepareAttachments(
    {
      run: environment.run,
      caller,
      callee,
      target,
      callId: environment.callId,
      tool,
      toolName: call._tool,
      trace: environment.trace,
      // A tool rule asking for approval of the delegating call asks for each attachment too (ATT-4).
      approvalRequired: requiresApproval(tool),
      root,
      signal: environment.signal,
      ...(locate === undefined ? {} : { locate }),
      ...(confirm === undefined ? {} : { confirm }),
    },
    paths as string[],
  );
}

/** What a child gets of its call's prepared attachments (ATT-5 to ATT-7). */
export interface HandedOver {
  /** Its `attachment` data messages, after its own context. */
  messages: Message[];
  /** The images and PDFs its model gets as native parts, when there are any. */
  files?: ProviderFile[];
  /** What `delegate.started` records: path, media type and size, never the bytes. */
  records?: AttachmentRecord[];
}

/** Hands prepared attachments over (ATT-5 to ATT-7): nothing at all when there are none. */
export function handOver(attached: readonly PreparedAttachment[]): HandedOver {
  if (attached.length === 0) return { messages: [] };
  const files = attached
    .filter((attachment) => isNativePartType(attachment.mediaType))
    .map((attachment) => ({ path: attachment.path, mediaType: attachment.mediaType, data: attachment.content }));
  return { messages: attached.map((attachment) => attachment.message), files, records: attachmentRecords(attached) };
}
