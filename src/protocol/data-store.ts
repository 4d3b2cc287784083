/** The run's context with its data records kept beside it, so reads never rescan the messages. */
import { isDataLike } from './builtin-handlers.js';
import { collectTools } from './tools.js';
import type { Message, ToolSchema } from './types.js';
import { dataRecordOf, readVisible, type DataRecord, type Reference } from './variables.js';

/** The growing context of one run: messages in order, and the data records they hold. */
export class ContextStore {
  readonly messages: Message[] = [];
  readonly records: DataRecord[] = [];
  /** The tools defined so far; a later definition of a name wins (and moves to the end). */
  readonly tools = new Map<string, ToolSchema>();
  /** The records again, by kind and then by instance, so a read looks only at what it can see. */
  private readonly byKind = new Map<string, { global: DataRecord[]; instances: Map<string, DataRecord[]> }>();

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
        let kind = this.byKind.get(record.kind);
        if (!kind) {
          kind = { global: [], instances: new Map() };
          this.byKind.set(record.kind, kind);
        }
        if (record.instance === undefined) kind.global.push(record);
        else {
          const own = kind.instances.get(record.instance);
          if (own) own.push(record);
          else kind.instances.set(record.instance, [record]);
        }
      }
    }
  }

  /** Reads a reference for an instance (global data plus that instance's own). */
  read(reference: Reference, instance: string | undefined): { found: boolean; value?: unknown } {
    return readVisible(this.visible(reference.kind, instance), reference.segments);
  }

  /** The records of a kind an instance sees, oldest first: the global ones, then its own (DATA-6). */
  private visible(kind: string, instance: string | undefined): DataRecord[][] {
    const records = this.byKind.get(kind);
    if (!records) return [];
    return instance === undefined ? [records.global] : [records.global, records.instances.get(instance) ?? []];
  }

  /** The whole merged value of a kind for an instance. */
  view(kind: string, instance: string | undefined): { found: boolean; value?: unknown } {
    return readVisible(this.visible(kind, instance), []);
  }

  /** Every instance name that occurs in the context, sorted. */
  instances(): string[] {
    const names = new Set<string>();
    for (const message of this.messages) if (typeof message._instance === 'string') names.add(message._instance);
    return [...names].sort();
  }
}
