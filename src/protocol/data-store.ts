/** The run's context with its data records kept beside it, so reads never rescan the messages. */
import { isDataLike } from './builtin-handlers.js';
import { collectTools } from './tools.js';
import type { Message, ToolSchema } from './types.js';
import { dataRecordOf, readPath, viewOf, type DataRecord, type Reference } from './variables.js';

/** The growing context of one run: messages in order, and the data records they hold. */
export class ContextStore {
  readonly messages: Message[] = [];
  readonly records: DataRecord[] = [];
  /** The tools defined so far; a later definition of a name wins (and moves to the end). */
  readonly tools = new Map<string, ToolSchema>();
  private readonly listeners = new Set<(record: DataRecord) => void>();

  constructor(messages: readonly Message[] = []) {
    for (const message of messages) this.append(message);
  }

  /** Appends a message (never mutates an old one). */
  append(message: Message): void {
    this.messages.push(message);
    collectTools([message], this.tools);
    if (isDataLike(message)) {
      const record = dataRecordOf(message);
      if (record) {
        this.records.push(record);
        for (const listener of this.listeners) listener(record);
      }
    }
  }

  /** Reads a reference for an instance (global data plus that instance's own). */
  read(reference: Reference, instance: string | undefined): { found: boolean; value?: unknown } {
    return readPath(this.records, reference.kind, instance, reference.segments);
  }

  /** The whole merged value of a kind for an instance. */
  view(kind: string, instance: string | undefined): { found: boolean; value?: unknown } {
    return viewOf(this.records, kind, instance);
  }

  /** Calls `listener` with every record appended from now on; returns the function that stops it. */
  watch(listener: (record: DataRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every instance name that occurs in the context, sorted. */
  instances(): string[] {
    const names = new Set<string>();
    for (const message of this.messages) if (typeof message._instance === 'string') names.add(message._instance);
    return [...names].sort();
  }
}
