/**
 * Children started at once take turns (DEL-30): each turn of the event loop starts an eighth of
 * the children waiting (at least one), and they go from their start to their first wait — their
 * first model request on the wire, usually — before the next turn, so the model is already
 * working on the first while the rest are prepared.
 */

/** Each turn starts this fraction of the children waiting, rounded up. */
const SHARE_PER_TURN = 1 / 8;

/** The children waiting for their turn, oldest first, from `head` on. */
let waiting: Array<() => void> = [];
let head = 0;
let turning = false;

/**
 * Resolves on the caller's turn, which comes after the turns of every child that asked before it.
 * Started together, a fan-out's children would otherwise advance in step — each awaited step
 * taken by all of them before any takes the next — so the first request would leave only once
 * every child had been prepared, and the model's latency would start after all of that work
 * instead of overlapping it. A turn per child would cost a wide fan-out a turn of the event loop
 * per child, with the answers already coming in one by one between them: an eighth per turn keeps
 * the first turns small and the number of turns near eight times the logarithm of the width.
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

/** Lets the next share of the waiting children go; what they do up to their first wait runs before the next turn. */
function nextTurn(): void {
  const end = Math.min(waiting.length, head + Math.ceil((waiting.length - head) * SHARE_PER_TURN));
  const going = waiting.slice(head, end);
  head = end;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
    turning = false;
  } else {
    // Children that keep arriving as fast as they leave would never empty the list: the slots of
    // those gone are dropped once they are half of it, so it holds at most twice those waiting.
    if (head * 2 >= waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
    setImmediate(nextTurn);
  }
  for (const go of going) go();
}

/** Slots the list of waiting children holds, gone ones included (tests: it stays within twice those waiting). */
export function childTurnSlots(): number {
  return waiting.length;
}
