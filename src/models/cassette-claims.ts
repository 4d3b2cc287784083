/** Which call gets a cassette entry that is used up once used (spec/cassettes.md CAS-2, CAS-16): the seam a queue shares across processes. */

/**
 * Hands out a cassette's consumable entries (CAS-2): the replay model asks, in file order, for
 * each entry that matches a call and is not `repeat` (CAS-3), and the first one granted answers it.
 * An entry is granted once: to the first caller that asks for it, never again. In process the
 * replay model keeps this itself ({@link LocalCassetteClaims}); a queued tree shares one set
 * through Redis, so every process of the tree uses each entry once between them (CAS-16).
 */
export interface CassetteClaims {
  /** True when the entry at `index` (0-based, file order) was free and is now the caller's; false when it was used. */
  claim(index: number): boolean | Promise<boolean>;
}

/** The claims of one replay model in one process: an entry is granted to the first call that asks for it. */
export class LocalCassetteClaims implements CassetteClaims {
  private readonly used = new Set<number>();

  /** Grants the entry when no call had it yet. */
  claim(index: number): boolean {
    if (this.used.has(index)) return false;
    this.used.add(index);
    return true;
  }
}
