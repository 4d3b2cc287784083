/** Delivers a Solution's calls to `ModelRequest.onCall` as they stream in, exactly once each and in order. */
import type { Call } from '../protocol/types.js';
import { CallsStreamParser } from './incremental-json.js';
import type { ModelRequest } from './model.js';
import { isJsonObject } from './parse-json.js';

/**
 * Feeds streamed answer text to a CallsStreamParser and calls `request.onCall(call, index)` for
 * each complete call object. `finish` then delivers any call of the final answer the stream did
 * not (so every call of a parsable answer is delivered once, whether the provider streamed or not).
 */
export class StreamedCalls {
  private readonly parser = new CallsStreamParser();
  private delivered = 0;
  private seen = 0;

  /**
   * @param request whose `onCall` receives the calls (nothing happens without one).
   * @param mapCall turns a streamed element into the call the caller sees (e.g. strict-schema nulls removed).
   */
  constructor(
    private readonly request: ModelRequest,
    private readonly mapCall: (value: unknown) => unknown = (value) => value,
  ) {}

  /** How many calls have been delivered to `onCall`. */
  get count(): number {
    return this.delivered;
  }

  /** Feeds a text delta of the answer. */
  push(delta: string): void {
    if (!this.request.onCall) return;
    for (const completed of this.parser.push(delta)) {
      this.deliver(this.mapCall(completed.value), completed.index);
    }
    this.seen = this.parser.completed;
  }

  /** Delivers the calls of the final (already mapped) answer that streaming did not reach. */
  finish(solution: unknown): void {
    if (!this.request.onCall || !isJsonObject(solution) || !Array.isArray(solution.calls)) return;
    solution.calls.forEach((call: unknown, index: number) => {
      if (index >= this.seen) this.deliver(call, index);
    });
    this.seen = Math.max(this.seen, solution.calls.length);
  }

  private deliver(call: unknown, index: number): void {
    if (!isJsonObject(call)) return;
    this.delivered += 1;
    this.request.onCall?.(call as Call, index);
  }
}

/** Calls `request.onCall` for each object in the answer's `calls` array, in order (non-objects keep their index). */
export function emitCalls(solution: unknown, request: ModelRequest): void {
  new StreamedCalls(request).finish(solution);
}
