/** Text written in batches: what one turn of the event loop produced, in one write at its end, none lost (the access log, SERVE-10; the trace file, TRACE-2). */

/** Pending text beyond which a batch is written at once rather than at the end of the turn. */
export const BATCH_BYTES = 64 * 1024;

/** Held items beyond which a {@link turnBatch} is drained at once rather than at the end of the turn. */
export const BATCH_ITEMS = 1024;

/** Items gathered over one turn of the event loop and handed on together. */
export interface TurnBatch<T> {
  /** Adds one item; it is drained by the end of this turn of the event loop. */
  add(item: T): void;
  /** Drains every held item now (before shutdown messages, and when the process exits). */
  flush(): void;
}

/**
 * Gathers the items added during one turn of the event loop and hands them to `drain` in order,
 * right after the turn (`setImmediate`), or at once when their weight reaches `limit`. `flush`
 * drains what is held, so nothing is lost on shutdown or exit; `drain` is never given an empty list.
 */
export function turnBatch<T>(drain: (items: T[]) => void, limit: number, weigh: (item: T) => number): TurnBatch<T> {
  let held: T[] = [];
  let weight = 0;
  let scheduled = false;
  const flush = (): void => {
    if (held.length === 0) return;
    const items = held;
    held = [];
    weight = 0;
    drain(items);
  };
  const onTurnEnd = (): void => {
    scheduled = false;
    flush();
  };
  return {
    add(item) {
      held.push(item);
      weight += weigh(item);
      if (weight >= limit) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(onTurnEnd);
      }
    },
    flush,
  };
}

/** A log taking lines one by one and writing them together. */
export interface BatchedLog {
  /** Adds one line (without its newline); it is written by the end of this turn of the event loop. */
  line(text: string): void;
  /** Adds text as it is (lines already ended); written with the lines of this turn. */
  text(text: string): void;
  /** Writes every pending line now (before shutdown messages, and when the process exits). */
  flush(): void;
}

/**
 * A log that gathers the lines added during one turn of the event loop and hands them to `write`
 * as one text right after it, or at once when they pass {@link BATCH_BYTES}. Under load many
 * requests finish in one turn, and one write of their lines costs about what one line did.
 */
export function batchedLog(write: (text: string) => unknown): BatchedLog {
  const batch = turnBatch<string>(
    (texts) => write(texts.join('')),
    BATCH_BYTES,
    (text) => text.length,
  );
  return {
    line: (text) => batch.add(`${text}\n`),
    text: (text) => batch.add(text),
    flush: () => batch.flush(),
  };
}
