/** Identifiers of runs and the like. */
import { randomUUID } from 'node:crypto';

/** A fresh id for runs and the like. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}
