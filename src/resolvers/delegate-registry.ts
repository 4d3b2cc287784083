/** The runtime's named registry of delegates (DEL-21): names a library (or the workers layer) gives to paths, URLs or in-memory Requests. */
import { delegateNameProblem, delegateTargetProblem } from '../protocol/tools/delegate-names.js';
import { UsageError } from '../protocol/errors.js';
import { isJsonObject, type RequestDocument } from '../protocol/types.js';

/** What a name stands for: a relative path (against the root) or an http(s) URL, or a Request document held in memory. */
export type DelegateTarget = string | RequestDocument;

/**
 * Names for delegates, held by a runtime and asked after the referring document's own
 * `config.delegates` (DEL-21). A path is relative to the root and confined to it (DEL-4), a URL is
 * fetched under the host rules (DEL-5), a document is validated when it is resolved (DEL-8). A name
 * registered again is replaced. Registering checks the name and the form of the target, and
 * throws a UsageError naming what is wrong.
 */
export class DelegateRegistry {
  private readonly entries = new Map<string, DelegateTarget>();

  constructor(entries: Readonly<Record<string, DelegateTarget>> = {}) {
    for (const [name, target] of Object.entries(entries)) this.register(name, target);
  }

  /** Gives `name` to a target (replacing what it stood for); throws a UsageError for a bad name or target. */
  register(name: string, target: DelegateTarget): this {
    const problem =
      delegateNameProblem(name) ??
      (typeof target === 'string'
        ? delegateTargetProblem(target)
        : isJsonObject(target)
          ? undefined
          : `Expected a path, a URL or a Request document, got ${JSON.stringify(target)}.`);
    if (problem) throw new UsageError(`Cannot register the delegate "${name}": ${problem}`, { name });
    // A document is copied, so changing the caller's object later changes nothing here.
    this.entries.set(name, typeof target === 'string' ? target : structuredClone(target));
    return this;
  }

  /** Removes a name; true when it was registered. */
  unregister(name: string): boolean {
    return this.entries.delete(name);
  }

  /** What a name stands for, if it is registered. */
  get(name: string): DelegateTarget | undefined {
    const target = this.entries.get(name);
    return typeof target === 'object' ? structuredClone(target) : target;
  }

  /** True when the name is registered. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The registered names, sorted. */
  names(): string[] {
    return [...this.entries.keys()].sort();
  }
}
