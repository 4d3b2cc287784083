/** Waiting for Activities (spec/tools-and-activities.md TOOL-24, spec/errors.md ERR-8): no longer than the run's signal, the activity timeout, or the process that could settle them allows. */
import { onAbort } from '../cancellation.js';
import { ActivityError, cancelled } from '../errors.js';

/** The longest delay a Node timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An Activity the runtime is waiting for: what a failure of its call names. */
export interface PendingActivity {
  /** The Activity's registered name. */
  activity: string;
  /** The call's id in its run. */
  call: string;
  /** The tool the call names. */
  tool: string;
  /** The run whose call it is. */
  run: string;
}

/** How long an Activity may run, and the controller of the signal it was handed, aborted when it runs out. */
export interface ActivityTimeout {
  ms: number;
  controller: AbortController;
}

/**
 * The Activities a runtime waits for. A host whose event loop emptied while a run was pending
 * (`delegate-run`, CLI-27) fails them with {@link PendingActivities.failStalled}: nothing left in
 * the process can settle them.
 */
export class PendingActivities {
  private readonly waiting = new Map<PendingActivity, (error: ActivityError) => void>();

  /**
   * Settles like `work`, or rejects: with `cancelled_by_user` as soon as `signal` aborts (LOOP-10);
   * with `activity_error` once `timeout.ms` have passed, aborting `timeout.controller` (TOOL-24);
   * with `activity_error` when {@link failStalled} is called, after `onStalled` (ERR-8). The work
   * itself goes on; its later failure is handled, never unhandled.
   */
  wait<T>(work: Promise<T>, about: PendingActivity, signal: AbortSignal, onStalled: (error: ActivityError) => void, timeout?: ActivityTimeout): Promise<T> {
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(cancelled());
    }
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        release();
        this.waiting.delete(about);
        if (timer) clearTimeout(timer);
      };
      const fail = (error: unknown) => {
        settle();
        reject(error);
      };
      const release = onAbort(signal, () => fail(cancelled()));
      this.waiting.set(about, (error) => {
        onStalled(error);
        fail(error);
      });
      // A timer longer than Node can hold would fire at once: such a timeout is no limit in practice.
      if (timeout && timeout.ms <= MAX_TIMER_MS) {
        timer = setTimeout(() => {
          const error = timedOut(about, timeout.ms);
          fail(error);
          timeout.controller.abort(error);
        }, timeout.ms);
      }
      work.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => fail(error),
      );
    });
  }

  /**
   * Fails every Activity still waited for as one that can never finish (ERR-8): its call fails with
   * `activity_error`, and so does its run. Called when nothing left in the process could settle
   * them (the event loop emptied while a run was pending); returns the Activities it failed.
   */
  failStalled(): PendingActivity[] {
    const stalled = [...this.waiting];
    for (const [about, fail] of stalled) fail(stalledError(about));
    return stalled.map(([about]) => about);
  }
}

function named(about: PendingActivity): string {
  return `The Activity "${about.activity}" of the call ${about.call} to "${about.tool}"`;
}

function timedOut(about: PendingActivity, ms: number): ActivityError {
  return new ActivityError(
    'activity_error',
    `${named(about)} ran longer than the activity timeout of ${ms / 1000} s and was stopped waiting for; its signal was aborted.`,
    { toolName: about.tool, activity: about.activity, call: about.call, timeoutMs: ms },
  );
}

function stalledError(about: PendingActivity): ActivityError {
  return new ActivityError(
    'activity_error',
    `${named(about)} can never finish: its promise is still pending, and nothing is left in the process (no timer, socket or other work) that could settle it.`,
    { toolName: about.tool, activity: about.activity, call: about.call, stalled: true },
  );
}
