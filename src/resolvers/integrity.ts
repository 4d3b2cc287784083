/** Integrity pinning of delegate references: `#sha256-<base64>` suffixes checked against the exact bytes loaded. */
import { createHash } from 'node:crypto';
import { DelegateError } from '../protocol/errors.js';

/** The digest algorithms a pin may name (subresource-integrity style). */
export const INTEGRITY_ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;

/** One of {@link INTEGRITY_ALGORITHMS}. */
export type IntegrityAlgorithm = (typeof INTEGRITY_ALGORITHMS)[number];

/** A parsed integrity pin: `<algorithm>-<base64 digest>`. */
export interface IntegrityPin {
  algorithm: IntegrityAlgorithm;
  /** The raw digest bytes the pin expects. */
  digest: Buffer;
  /** The pin as written after `#`, e.g. `sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=`. */
  text: string;
}

/** A reference split into the part that locates the document and its optional pin. */
export interface SplitReference {
  /** The reference without the integrity suffix. */
  reference: string;
  pin?: IntegrityPin;
}

const DIGEST_BYTES: Record<IntegrityAlgorithm, number> = { sha256: 32, sha384: 48, sha512: 64 };
const PIN_PATTERN = /^(sha256|sha384|sha512)-([A-Za-z0-9+/_-]+={0,2})$/;
const PIN_PREFIX = /^(sha256|sha384|sha512)-/;

/**
 * Splits `reference#sha256-<base64>` into the reference and its pin. A fragment that does not
 * start with an algorithm name is not a pin and stays part of the reference. A fragment that
 * starts like a pin but is malformed (bad base64, wrong digest length) is refused with
 * `delegate_forbidden`, so a typo never silently disables the check.
 */
export function splitIntegrity(reference: string): SplitReference {
  const hash = reference.lastIndexOf('#');
  if (hash < 0) return { reference };
  const fragment = reference.slice(hash + 1);
  if (!PIN_PREFIX.test(fragment)) return { reference };
  const match = PIN_PATTERN.exec(fragment);
  const algorithm = match?.[1] as IntegrityAlgorithm | undefined;
  // Node's base64 decoder also accepts the URL-safe alphabet, so both spellings are understood.
  const digest = match && algorithm ? Buffer.from(match[2] ?? '', 'base64') : undefined;
  if (!algorithm || !digest || digest.length !== DIGEST_BYTES[algorithm]) {
    throw new DelegateError(
      'delegate_forbidden',
      `Delegate "${reference}" carries a malformed integrity pin "#${fragment}": expected "#${algorithm ?? 'sha256'}-" followed by the base64 digest of ${DIGEST_BYTES[algorithm ?? 'sha256']} bytes.`,
      { reference, pin: fragment },
    );
  }
  return { reference: reference.slice(0, hash), pin: { algorithm, digest, text: fragment } };
}

/** The integrity string (`sha256-<base64>`) of the exact bytes given. */
export function integrityOf(bytes: Uint8Array | string, algorithm: IntegrityAlgorithm = 'sha256'): string {
  return `${algorithm}-${createHash(algorithm).update(bytes).digest('base64')}`;
}

/**
 * Checks the loaded bytes against a pin; does nothing without one. A mismatch throws
 * `delegate_forbidden` naming the reference, the location and both digests.
 */
export function checkIntegrity(bytes: Uint8Array | string, pin: IntegrityPin | undefined, reference: string, location: string): void {
  if (!pin) return;
  const actual = createHash(pin.algorithm).update(bytes).digest();
  if (actual.equals(pin.digest)) return;
  const expected = `${pin.algorithm}-${pin.digest.toString('base64')}`;
  const found = `${pin.algorithm}-${actual.toString('base64')}`;
  throw new DelegateError(
    'delegate_forbidden',
    `Delegate "${reference}" failed its integrity check: expected ${expected}, but the document at ${location} has ${found}.`,
    { reference, location, expected, actual: found },
  );
}
