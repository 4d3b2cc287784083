/**
 * Children started at once take turns (DEL-30): one child starts per turn of the event loop, so
 * each goes from its start to its first wait — its first model request on the wire, usually —
 * before the next one starts, and the model is already working on the first while the rest are
 * prepared.
 */

/** The children waiting for their turn, oldest first, from `head` on. */
let waiting: Array<() => void> = [];
let head = 0;
let turning = false;

/**
 * Resolves on the caller's turn: the next turn of the event loop after every child that asked
 * before it has had its own. Started together, a fan-out's children would otherwise advance in
 * step — each awaited step taken by all of them before any takes the next — so the first request
 * would leave only once every child had been prepared, and the model's latency would start after
 * all of that work instead of overlapping it.
 */
export function childTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!turning) {
      turning = true;
      setImmediate(nextTurn);
    }
  });
}

/** Lets the oldest waiting child go; what it does up to its first wait runs before the next turn. */
function nextTurn(): void {
  const go = waiting[head];
  head += 1;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
    turning = false;
  } else {
    setImmediate(nextTurn);
  }
  go?.();
}
