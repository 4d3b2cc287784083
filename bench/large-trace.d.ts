// Types of bench/large-trace.js, so the TypeScript tests share it.
/** The events of a synthetic tree of `runs` runs, about `events` events in all. */
export declare function largeTrace(options: {
  runs: number;
  events: number;
}): Array<{ ts: string; event: string; run: string; parent: string | null; depth: number } & Record<string, unknown>>;
