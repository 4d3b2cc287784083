/** What one command's runs hold open — the trace, the journal, the runtime's resolvers, the queue, the span export — closed together and once. */
import type { DelegatingRuntime } from '../create-runtime.js';
import type { JsonlFileSink } from '../files/jsonl-file-sink.js';
import type { JournalStore } from '../protocol/trace/journal.js';
import type { QueueChildRunner } from '../queue/queue-child-runner.js';
import type { CommandTelemetry } from './telemetry-option.js';

/**
 * The resources a command opens as it sets up and runs (`delegate-run`, `delegate-mcp`): each is
 * set once it is open, and `close` closes those that are, in order, whether the run finished or
 * its setup failed (TRACE-2, CLI-22, CLI-24, CLI-27).
 */
export class RunSession {
  /** The `--trace` file, once opened. */
  sink: JsonlFileSink | undefined;
  /** The `--journal` written, or the journal `--resume` continues. */
  journal: JournalStore | undefined;
  /** The runtime, whose resolvers hold connections and caches. */
  runtime: DelegatingRuntime | undefined;
  /** The `--queue` connection delegations go through. */
  queue: QueueChildRunner | undefined;
  /** The OpenTelemetry export (TEL-1), closed last: what the others' closing traces is sent too. */
  telemetry: CommandTelemetry | undefined;
  /** Unsubscribes from the process running out of work (CLI-27). */
  stopIdle: (() => void) | undefined;
  #closed = false;

  constructor(journal?: JournalStore) {
    this.journal = journal;
  }

  /** Closes what is open, once: a second call does nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.stopIdle?.();
    this.sink?.close();
    this.journal?.close();
    await this.runtime?.resolvers.close();
    await this.queue?.close();
    await this.telemetry?.close();
  }
}
