/** Text written in batches: the lines of one turn of the event loop in one write, none lost (the access log, SERVE-10; the trace file, TRACE-2). */

/** Pending text beyond which a batch is written at once rather than at the end of the turn. */
export const BATCH_BYTES = 64 * 1024;

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
 * as one text right after it (`setImmediate`), or at once when they pass {@link BATCH_BYTES}. Under
 * load many requests finish in one turn, and one write of their lines costs about what one line
 * did; `flush` writes what is pending, so nothing is lost on shutdown or exit.
 */
export function batchedLog(write: (text: string) => unknown): BatchedLog {
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write(text);
  };
  const onTurnEnd = (): void => {
    scheduled = false;
    flush();
  };
  const add = (text: string): void => {
    pending += text;
    if (pending.length >= BATCH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(onTurnEnd);
    }
  };
  return {
    line: (text) => add(`${text}\n`),
    text: add,
    flush,
  };
}
