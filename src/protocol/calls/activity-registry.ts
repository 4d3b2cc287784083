/** The registry of Activities: async functions executing calls, by name, with what the core must know about each. */
import type { Activity } from '../contracts.js';
import type { Call } from '../types.js';

/** What the core needs to know about an Activity besides its function. */
export interface ActivityOptions {
  /**
   * May run for documents that are not trusted (TOOL-19): true only for Activities that run
   * nothing local on the document's behalf, such as the Delegation Activity, whose child runs
   * carry the trust themselves.
   */
  runsUntrusted?: boolean;
  /**
   * Ends by itself when the run is cancelled, and is awaited then: the Delegation Activity, whose
   * child shares the signal, so every child's `run.failed` is traced before its parent's. Any
   * other Activity is stopped waiting for at cancellation (LOOP-10), since it may ignore its signal.
   */
  ownsCancellation?: boolean;
  /**
   * Parameters that name context rather than hold values (the `delegate` tool's `context`, the
   * `need_context` tool's `missing`, DEL-25, DEL-26): passed to the Activity as written, their
   * `†` references never resolved (CALL-10).
   */
  namesContext?: readonly string[];
  /**
   * For an Activity whose calls name the context it receives (the `delegate` tool's
   * `context.include`, DEL-25): the scopes a call names, as written (`†state.notes`, `input`). The
   * Activity receives exactly the context they allow (SCOPE-6), not its tool's `_scopes`'; a scope
   * written as a reference makes the call wait until it exists, like a reference (VAR-5). It may
   * throw a CallError for a scope the call may not name.
   */
  scopesOf?: (call: Call) => readonly string[];
}

/** An Activity with its registration options. */
export interface ActivityRegistration
  extends Required<Pick<ActivityOptions, 'runsUntrusted' | 'ownsCancellation'>>,
    Pick<ActivityOptions, 'namesContext' | 'scopesOf'> {
  name: string;
  activity: Activity;
}

/** Activities by name; a later registration of a name replaces the earlier one. */
export class ActivityRegistry {
  private readonly registrations = new Map<string, ActivityRegistration>();

  /** Registers (or replaces) the Activity of a name. */
  register(name: string, activity: Activity, options: ActivityOptions = {}): this {
    this.registrations.set(name, {
      name,
      activity,
      runsUntrusted: options.runsUntrusted ?? false,
      ownsCancellation: options.ownsCancellation ?? false,
      ...(options.namesContext ? { namesContext: options.namesContext } : {}),
      ...(options.scopesOf ? { scopesOf: options.scopesOf } : {}),
    });
    return this;
  }

  /** The Activity of a name, if one is registered. */
  get(name: string): Activity | undefined {
    return this.registrations.get(name)?.activity;
  }

  /** The Activity of a name with its options, if one is registered. */
  registration(name: string): ActivityRegistration | undefined {
    return this.registrations.get(name);
  }

  /** True when an Activity of this name is registered. */
  has(name: string): boolean {
    return this.registrations.has(name);
  }

  /** Every registered name, in registration order. */
  keys(): IterableIterator<string> {
    return this.registrations.keys();
  }

  /** The names a user registered (built-in ones start with `@`), for messages that list what is available. */
  list(): string[] {
    return [...this.registrations.keys()].filter((name) => !name.startsWith('@'));
  }
}
