/** A run tree's cassette entries claimed through Redis (QUEUE-17, CAS-16): every process of the tree uses each consumable entry once between them. */
import type { Redis } from 'ioredis';
import type { CassetteClaims } from '../models/cassette-claims.js';
import { ModelError } from '../protocol/errors.js';
import { KEPT_SECONDS } from './queue-keys.js';

/**
 * Claims an entry with `SET <prefix>:<index> 1 NX`: the process whose SET creates the key uses the
 * entry; every other finds it taken. Redis runs each SET alone, so no two claims of one entry both win.
 */
export class RedisCassetteClaims implements CassetteClaims {
  /** Entries a claim of this process has seen answered: granted here or taken elsewhere, each is used for good, so it is never asked again. */
  private readonly taken = new Set<number>();

  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {}

  /** True when this call's SET created the entry's key. A Redis that fails is a model error of the asking run. */
  async claim(index: number): Promise<boolean> {
    if (this.taken.has(index)) return false;
    try {
      const granted = (await this.client.set(`${this.prefix}:${index}`, '1', 'EX', KEPT_SECONDS, 'NX')) === 'OK';
      this.taken.add(index);
      return granted;
    } catch (error) {
      throw new ModelError('model_error', `Cannot claim the cassette's entry ${index} through Redis: ${(error as Error).message}`, { entry: index });
    }
  }
}
