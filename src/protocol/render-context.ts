/** Rendering: the context turned into provider messages by the handler pipeline, data merged by identity first. */
import type { ProviderMessage } from './model.js';
import { isDataLike } from './builtin-handlers.js';
import type { HandlerRegistry, RenderState } from './handlers.js';
import type { JsonSchema, Message, RequestConfig } from './types.js';
import { dataRecordOf, foldRecords, viewOf, type DataRecord } from './data-records.js';

/** What rendering produces for one model call. */
export interface RenderedContext {
  messages: ProviderMessage[];
  config: RequestConfig;
  solutionProperties: Record<string, JsonSchema>;
}

/** The identity of a data-like message: kind plus instance. */
export function identityOf(message: Message): string | undefined {
  if (!isDataLike(message)) return undefined;
  const kind = message.type === 'data' ? String(message.kind ?? 'data') : message.type;
  return `${kind}\u0000${typeof message._instance === 'string' ? message._instance : ''}`;
}

/** Builds the merged message of one identity, in the canonical shape of its kind. */
export function mergedMessage(kind: string, instance: string | undefined, records: DataRecord[], members: Message[]): Message | undefined {
  const mine = instance === undefined ? [] : records.filter((r) => r.kind === kind && r.instance === instance);
  // An instance's template slot (an input message without `input`) holds no record: nothing is given yet.
  const own = instance === undefined ? viewOf(records, kind, undefined) : mine.length > 0 ? { found: true, value: foldRecords(mine) } : { found: false };
  const latest = (field: string) => [...members].reverse().find((member) => member[field] !== undefined)?.[field];
  const extras: Record<string, unknown> = {};
  const schema = latest('schema');
  const description = latest('description');
  if (schema !== undefined) extras.schema = schema;
  if (description !== undefined) extras.description = description;
  if (instance !== undefined) extras._instance = instance;
  if (!own.found) {
    // A template slot: nothing given yet, but its schema still tells what is expected.
    return kind === 'input' ? { type: 'input', ...extras } : undefined;
  }
  if (kind === 'input') return { type: 'input', input: own.value, ...extras };
  if (kind === 'state') return { type: 'state', state: own.value, ...extras };
  return { type: 'data', kind, data: own.value, ...extras };
}

/**
 * Runs every message through its handler. Data-like messages of one identity render once, merged,
 * at the position of the identity's first message: the prompt's order then does not depend on
 * which parallel call finished last, so it stays stable (and cache-friendly) across runs.
 */
export function renderContext(context: readonly Message[], handlers: HandlerRegistry, config: RequestConfig = {}): RenderedContext {
  const state: RenderState = { messages: [], config: { ...config }, solutionProperties: {}, instructions: [] };
  // Each identity's messages and records, gathered in one pass so that merging stays linear.
  const records = new Map<string, DataRecord[]>();
  const firstIndex = new Map<string, number>();
  const members = new Map<string, Message[]>();
  context.forEach((message, index) => {
    const identity = identityOf(message);
    if (identity === undefined) return;
    if (!firstIndex.has(identity)) {
      firstIndex.set(identity, index);
      members.set(identity, []);
      records.set(identity, []);
    }
    members.get(identity)!.push(message);
    const record = dataRecordOf(message);
    if (record) records.get(identity)!.push(record);
  });
  context.forEach((message, index) => {
    const handler = handlers.get(message.type);
    if (!handler?.render) return;
    const identity = identityOf(message);
    if (identity === undefined) {
      handler.render(message, state);
      return;
    }
    if (firstIndex.get(identity) !== index) return;
    const [kind, instance] = identity.split('\u0000') as [string, string];
    const merged = mergedMessage(kind, instance || undefined, records.get(identity) ?? [], members.get(identity) ?? []);
    if (merged) (handlers.get(merged.type) ?? handler).render?.(merged, state);
  });
  if (state.instructions.length > 0) state.messages.push({ role: 'system', content: state.instructions.join('\n\n') });
  return { messages: state.messages, config: state.config, solutionProperties: state.solutionProperties };
}
