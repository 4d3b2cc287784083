/** Following a signal (onAbort, runSignal): whatever followers come and go, an abort calls exactly those still following, once each, in the order they came. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { onAbort, runSignal } from '../../src/protocol/cancellation.js';

type Step = { add: true } | { release: number };

const steps = fc.array(
  fc.oneof(
    fc.constant<Step>({ add: true }),
    fc.nat({ max: 40 }).map((n): Step => ({ release: n })),
  ),
  { maxLength: 120 },
);

describe('onAbort', () => {
  it('calls every follower not released, once, in the order they followed; released ones never', () => {
    fc.assert(
      fc.property(steps, fc.boolean(), (script, releaseTwice) => {
        const controller = new AbortController();
        const called: number[] = [];
        const releases: (() => void)[] = [];
        const released = new Set<number>();
        for (const step of script) {
          if ('add' in step) {
            const id = releases.length;
            releases.push(onAbort(controller.signal, () => called.push(id)));
          } else if (releases.length > 0) {
            const id = step.release % releases.length;
            releases[id]!();
            if (releaseTwice) releases[id]!();
            released.add(id);
          }
        }
        controller.abort();
        controller.abort();
        const expected = releases.map((_, id) => id).filter((id) => !released.has(id));
        expect(called).toEqual(expected);
        // After the abort, a release changes nothing and a new follower is called at once.
        for (const release of releases) release();
        let late = 0;
        onAbort(controller.signal, () => late++);
        expect(late).toBe(1);
      }),
    );
  });

  it('keeps one listener on the signal however many follow it, so a fan-out adds and releases in constant time', () => {
    const controller = new AbortController();
    let added = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof add;
    const releases = Array.from({ length: 1000 }, () => onAbort(controller.signal, () => undefined));
    for (const release of releases) release();
    onAbort(controller.signal, () => undefined);
    expect(added).toBe(1);
  });
});

describe('runSignal', () => {
  it('aborts every child signal with the parent reason, except those released first', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 60 }), (releasedFirst) => {
        const parent = new AbortController();
        const children = releasedFirst.map((release) => {
          const child = runSignal(parent.signal);
          if (release) child.release();
          return child.signal;
        });
        parent.abort('stop');
        expect(children.map((signal) => signal.aborted)).toEqual(releasedFirst.map((release) => !release));
        for (const signal of children) if (signal.aborted) expect(signal.reason).toBe('stop');
      }),
    );
  });
});
