/** The nearest of several valid names to one that is not valid, for "did you mean" hints (CLI-29, DOC-3). */
import { createRequire } from 'node:module';

// fastest-levenshtein (CommonJS) is loaded with the first name misspelt, not by every start (CLI-34).
const require = createRequire(import.meta.url);

/**
 * The valid name nearest to `given` by edit distance, when it is near enough to be what was meant:
 * at most a third of the longer name's length (and at least 2) apart, or equal ignoring case and
 * the separators `-` and `_`. Ties go to the earlier candidate. Undefined when none is that near.
 */
export function nearestName(given: string, candidates: readonly string[]): string | undefined {
  const { distance } = require('fastest-levenshtein') as typeof import('fastest-levenshtein');
  const plain = (name: string) => name.toLowerCase().replace(/[-_]/g, '');
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const apart = plain(candidate) === plain(given) ? 0 : distance(given, candidate);
    if (best === undefined || apart < best.distance) best = { name: candidate, distance: apart };
  }
  if (best === undefined) return undefined;
  return best.distance <= Math.max(2, Math.floor(Math.max(given.length, best.name.length) / 3)) ? best.name : undefined;
}
