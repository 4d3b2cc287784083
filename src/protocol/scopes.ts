/** Scopes: the allow-list of parent context a latent hint, an Activity or a delegate may see. */
import { CallError } from './errors.js';
import type { ContextStore } from './context-store.js';
import type { Message } from './types.js';
import { parseReference } from './references.js';

/** Scope names for plain turns; everything else names a data kind (optionally narrowed by a path). */
const TURN_SCOPES: Record<string, (message: Message) => boolean> = {
  system: (message) => message.type === 'system' || (message.type === 'text' && message.role === 'system'),
  history: (message) => message.type === 'user' || message.type === 'assistant' || (message.type === 'text' && message.role !== 'system'),
  tool: (message) => message.type === 'tool',
};

/** Parses a scope (`state`, `state.user`, `history`); throws CallError for malformed ones. */
export function parseScope(scope: string): { kind: string; segments: (string | number)[]; path: string } {
  const reference = parseReference(`†${scope}`);
  if (!reference) throw new CallError('invalid_params', `Expected a scope such as "state", "state.user", "system" or "history", got "${scope}".`);
  return { kind: reference.kind, segments: reference.segments, path: reference.path };
}

/** Places `value` at `segments` inside a fresh container, so a narrowed scope keeps its shape. */
function nest(segments: (string | number)[], value: unknown): unknown {
  return segments.reduceRight<unknown>(
    (inner, segment) => (typeof segment === 'number' ? Object.assign([], { [segment]: inner }) : { [segment]: inner }),
    value,
  );
}

/**
 * The messages of `store` that `scopes` allow, seen from `instance`: plain turns by scope name,
 * data kinds as one merged message each (narrowed to the path when one is given). Nothing
 * unscoped is ever returned, and nothing of another instance.
 */
export function scopeContext(store: ContextStore, scopes: readonly string[] | undefined, instance: string | undefined): Message[] {
  if (!scopes || scopes.length === 0) return [];
  const selected: Message[] = [];
  for (const scope of scopes) {
    const turns = TURN_SCOPES[scope];
    if (turns) {
      selected.push(...store.messages.filter(turns));
      continue;
    }
    const { kind, segments } = parseScope(scope);
    const found = segments.length === 0 ? store.view(kind, instance) : store.read({ kind, segments, path: '', text: '' }, instance);
    if (!found.found) continue;
    const value = nest(segments, found.value);
    const description = latestField(store.messages, kind, instance, 'description');
    const extras: Record<string, unknown> = description === undefined ? {} : { description };
    if (segments.length === 0) {
      const schema = latestField(store.messages, kind, instance, 'schema');
      if (schema !== undefined) extras.schema = schema;
    }
    if (kind === 'input') selected.push({ type: 'input', input: value, ...extras });
    else if (kind === 'state') selected.push({ type: 'state', state: value, ...extras });
    else selected.push({ type: 'data', kind, data: value, ...extras });
  }
  return selected;
}

function latestField(messages: readonly Message[], kind: string, instance: string | undefined, field: string): unknown {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    const messageKind = message.type === 'data' ? message.kind : message.type;
    if (messageKind !== kind) continue;
    if (message._instance !== undefined && message._instance !== instance) continue;
    if (message[field] !== undefined) return message[field];
  }
  return undefined;
}
