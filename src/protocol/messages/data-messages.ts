/** Data-like messages as the core meets them, asked of their types' handlers: identity, record, and the one message that shows a kind. */
import type { DataRecord, ReadResult } from '../variables/data-records.js';
import { ProtocolError } from '../errors.js';
import type { DataSemantics, HandlerRegistry, ShownFields } from './handlers.js';
import { isJsonObject, type Message } from '../types.js';

/** The data semantics of a message's type: defined for data-like types (`data`, `input`, `state`, ...), else undefined. */
export function dataSemanticsOf(message: Message, handlers: HandlerRegistry): DataSemantics | undefined {
  return handlers.get(message.type)?.data;
}

/** True for messages whose type is data-like: their values are data, merged by identity. */
export function isDataMessage(message: Message, handlers: HandlerRegistry): boolean {
  return dataSemanticsOf(message, handlers) !== undefined;
}

/** Who a data-like message speaks for: its kind and instance (none: global), and both as one key. */
export interface DataIdentity {
  key: string;
  kind: string;
  instance: string | undefined;
}

/** The identity of a data-like message, kind plus instance (MSG-12); undefined for other messages. */
export function dataIdentityOf(message: Message, handlers: HandlerRegistry): DataIdentity | undefined {
  const data = dataSemanticsOf(message, handlers);
  if (!data) return undefined;
  const kind = data.kindOf(message);
  const instance = typeof message._instance === 'string' && message._instance !== '' ? message._instance : undefined;
  return { key: `${kind}\u0000${instance ?? ''}`, kind, instance };
}

/** The identity of a data-like message as one key, kind plus instance (MSG-12); undefined for other messages. */
export function identityOf(message: Message, handlers: HandlerRegistry): string | undefined {
  return dataIdentityOf(message, handlers)?.key;
}

/**
 * The record a message contributes to its kind's data, by its type's handler (undefined for none).
 * Throws a ProtocolError (`invalid_request`) for a write whose `_path` or `_outputMethod` cannot
 * be read; a loaded document never holds one (its handler's record problem is a load problem).
 */
export function recordOf(message: Message, handlers: HandlerRegistry): DataRecord | undefined {
  const outcome = dataSemanticsOf(message, handlers)?.record(message);
  if (!outcome) return undefined;
  if (!outcome.ok) throw new ProtocolError('invalid_request', outcome.problem.message);
  return outcome.record;
}

/** The latest `schema` and `description` among the messages of one kind (oldest first). */
export function latestFields(members: readonly Message[]): ShownFields {
  const fields: ShownFields = {};
  for (const member of members) {
    if (typeof member.schema === 'boolean' || isJsonObject(member.schema)) fields.schema = member.schema;
    if (typeof member.description === 'string') fields.description = member.description;
  }
  return fields;
}

/**
 * The one message that shows a kind's merged value: made by the handler whose type always holds
 * the kind (`state`, `input`), else by the handler of the kind's messages (`data`); undefined
 * when there is nothing to show.
 */
export function showKind(kind: string, view: ReadResult, fields: ShownFields, members: readonly Message[], handlers: HandlerRegistry): Message | undefined {
  const owner = handlers.ownerOf(kind)?.data ?? members.map((member) => dataSemanticsOf(member, handlers)).find((data) => data !== undefined);
  return owner?.show(kind, view, fields);
}

/** Every instance name that occurs in `messages` (their `_instance`), sorted: the context's instances (DATA-1). */
export function instanceNames(messages: readonly Message[]): string[] {
  const names = new Set<string>();
  for (const message of messages) if (typeof message._instance === 'string') names.add(message._instance);
  return [...names].sort();
}
