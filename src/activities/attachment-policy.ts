/** The `config.attachments` policy of a Request (ATT-3): read from a document and checked against a call's files, caller first, then callee. */
import { ProtocolError } from '../protocol/errors.js';
import { isJsonObject, type RequestDocument } from '../protocol/types.js';

/** A Request's `config.attachments` (ATT-3). */
export interface AttachmentPolicy {
  /** Attachments one call may pass at most. */
  maxCount?: number;
  /** Their bytes in total at most. */
  maxBytes?: number;
  /** When present, every path must end in one of these (case-insensitive). */
  allowSuffixes?: string[];
  /** No path may end in one of these (case-insensitive). */
  denySuffixes?: string[];
  /** `required`: each attachment is approved through the confirm hook (ATT-4). */
  approval?: 'required' | 'never';
}

/** Which side of the delegation a policy belongs to. */
export type PolicySide = 'caller' | 'callee';

/** A file as the policies see it. */
export interface SizedPath {
  path: string;
  bytes: number;
}

/** The `config.attachments` of a document, or undefined when it declares none. */
export function attachmentPolicyOf(document: RequestDocument | undefined): AttachmentPolicy | undefined {
  const policy = document?.config?.attachments;
  return isJsonObject(policy) ? (policy as AttachmentPolicy) : undefined;
}

/** True when a worker accepts attachments: its policy allows at least one (ATT-1). */
export function acceptsAttachments(document: RequestDocument): boolean {
  const maxCount = attachmentPolicyOf(document)?.maxCount;
  return typeof maxCount === 'number' && maxCount > 0;
}

function endsWithAny(path: string, suffixes: readonly string[]): string | undefined {
  const lower = path.toLowerCase();
  return suffixes.find((suffix) => lower.endsWith(suffix.toLowerCase()));
}

/**
 * Checks the files of one call against one side's policy (ATT-3), throwing `invalid_params` that
 * names the rule and the side. The callee without a policy accepts none (`maxCount` 0); the caller
 * without one limits nothing.
 */
export function checkAttachmentPolicy(side: PolicySide, policy: AttachmentPolicy | undefined, files: readonly SizedPath[]): void {
  const fail = (rule: string, message: string, data: Record<string, unknown> = {}): never => {
    throw new ProtocolError('invalid_params', `Attachments break the ${side}'s config.attachments.${rule}: ${message}.`, { side, rule, ...data });
  };
  const maxCount = policy?.maxCount ?? (side === 'callee' ? 0 : undefined);
  if (maxCount !== undefined && files.length > maxCount) fail('maxCount', `${files.length} given, at most ${maxCount} allowed`);
  for (const file of files) {
    const denied = policy?.denySuffixes === undefined ? undefined : endsWithAny(file.path, policy.denySuffixes);
    if (denied !== undefined) fail('denySuffixes', `"${file.path}" ends in the denied "${denied}"`, { path: file.path });
    if (policy?.allowSuffixes !== undefined && endsWithAny(file.path, policy.allowSuffixes) === undefined)
      fail('allowSuffixes', `"${file.path}" ends in none of ${policy.allowSuffixes.map((suffix) => `"${suffix}"`).join(', ')}`, { path: file.path });
  }
  const total = files.reduce((sum, file) => sum + file.bytes, 0);
  if (policy?.maxBytes !== undefined && total > policy.maxBytes) fail('maxBytes', `${total} bytes in total, at most ${policy.maxBytes} allowed`);
}
